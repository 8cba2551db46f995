"""specviz settings -> vLLM's `--speculative-config` JSON, and a checker for the rules it must meet.

vLLM's speculative methods used here: `ngram` (prompt lookup), `draft_model` (a separate small
model), `eagle` / `eagle3` and `medusa` (heads on the target). The config is a JSON object passed
as `vllm serve <target> --speculative-config '<json>'`.
"""
from __future__ import annotations

import json
import shlex

VLLM_METHODS = ("ngram", "draft_model", "eagle", "eagle3", "medusa")
NEEDS_MODEL = {"draft_model", "eagle", "eagle3", "medusa"}
FROM_SPECVIZ = {"lookup": "ngram", "draft": "draft_model", "eagle": "eagle", "medusa": "medusa"}

# What a specviz run does not hand to a server as is (shown on the page, per method).
CAVEATS = {
    "ngram": "Nothing to convert: prompt lookup has no weights. What changes is only the engine: vLLM "
             "searches the prompt and the output so far, as specviz does, but it batches many requests, "
             "so the measured speedup here (batch 1, CPU) is an upper bound for a busy server.",
    "draft_model": "The drafter must be a Hugging Face checkpoint with the target's tokenizer. specviz's own "
                   "trained drafter is a safetensors file in specviz's layout, not a checkpoint vLLM "
                   "can load: export it as a standard Llama checkpoint (config.json + weights) first, "
                   "or name a published drafter.",
    "eagle": "vLLM loads EAGLE heads in the EAGLE project's checkpoint format, trained against the exact "
             "target you serve. specviz's EAGLE-style head is stored in specviz's own safetensors "
             "layout, so it does not carry over; use a published EAGLE checkpoint for your target or "
             "retrain with a tool that writes that format.",
    "eagle3": "Same as eagle: an EAGLE-3 checkpoint trained for this exact target is needed; specviz's "
              "head is not in that format.",
    "medusa": "vLLM expects Medusa heads in the Medusa checkpoint format, trained for this exact "
              "target. specviz's heads are specviz safetensors files and do not load there; a fine-tune "
              "of the target also invalidates them until they are retrained.",
}


class ConfigError(ValueError):
    """The chosen settings cannot make a valid config; the message is shown as is."""


def build(method: str, k: int, n_min: int | None = None, n_max: int | None = None,
          model: str | None = None) -> dict:
    """specviz method ('lookup', 'draft', 'eagle', 'medusa') or a vLLM method name -> config dict."""
    vm = FROM_SPECVIZ.get(method, method)
    if vm not in VLLM_METHODS:
        raise ConfigError(f"'{method}' has no vLLM speculative method (plain decoding needs no "
                          "--speculative-config)" if method == "plain" else f"unknown method '{method}'")
    cfg: dict = {"method": vm, "num_speculative_tokens": int(k)}
    if vm == "ngram":
        lo = int(n_min if n_min is not None else 1)
        hi = int(n_max if n_max is not None else max(lo, 4))
        cfg["prompt_lookup_min"], cfg["prompt_lookup_max"] = lo, hi
    if vm in NEEDS_MODEL:
        if not model or not model.strip():
            raise ConfigError(f"method '{vm}' needs a model (a Hugging Face id or a path)")
        cfg["model"] = model.strip()
    errors = validate(cfg)
    if errors:
        raise ConfigError("; ".join(errors))
    return cfg


def validate(cfg: dict) -> list[str]:
    """Every rule a generated config must meet; [] when it is valid."""
    errs = []
    m = cfg.get("method")
    if m not in VLLM_METHODS:
        errs.append(f"method must be one of {', '.join(VLLM_METHODS)}, got {m!r}")
    k = cfg.get("num_speculative_tokens")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        errs.append(f"num_speculative_tokens must be an integer >= 1, got {k!r}")
    has_lookup = "prompt_lookup_min" in cfg or "prompt_lookup_max" in cfg
    if m == "ngram":
        lo, hi = cfg.get("prompt_lookup_min"), cfg.get("prompt_lookup_max")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi)):
            errs.append("ngram needs integer prompt_lookup_min and prompt_lookup_max")
        elif not 1 <= lo <= hi:
            errs.append(f"ngram needs 1 <= prompt_lookup_min <= prompt_lookup_max, got {lo} and {hi}")
    elif has_lookup:
        errs.append(f"prompt_lookup_min/max only apply to ngram, not {m}")
    if m in NEEDS_MODEL and not (isinstance(cfg.get("model"), str) and cfg["model"].strip()):
        errs.append(f"method {m} needs a model")
    if m == "ngram" and "model" in cfg:
        errs.append("ngram takes no model")
    return errs


def to_json(cfg: dict) -> str:
    return json.dumps(cfg, separators=(", ", ": "))


def command(target: str, cfg: dict) -> str:
    """The `vllm serve` line for a target id and a config."""
    return f"vllm serve {shlex.quote(target)} --speculative-config {shlex.quote(to_json(cfg))}"
