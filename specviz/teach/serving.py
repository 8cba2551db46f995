"""specviz settings -> vLLM's `--speculative-config` JSON, and a checker for the rules it must meet.

Target: vLLM 0.33.0. Its speculative methods are `ngram`, `ngram_gpu`, `draft_model`, `suffix`,
`eagle`, `eagle3`, `mtp`, `dflash`, `dspark`, `extract_hidden_states` and `custom_class`; `medusa`
and `mlp_speculator` were removed after 0.32. The config is a JSON object passed as
`vllm serve <target> --speculative-config '<json>'`.
"""
from __future__ import annotations

import json
import shlex

from specviz.core.suffix import SUFFIX_FACTOR
from specviz.engine.methods import to_vllm

VLLM_VERSION = "0.33.0"
VLLM_METHODS = ("ngram", "ngram_gpu", "draft_model", "suffix", "eagle", "eagle3", "mtp", "dflash", "dspark",
                "extract_hidden_states", "custom_class")
REMOVED = {"medusa": "0.32", "mlp_speculator": "0.32"}   # method -> last vLLM release that served it
NGRAM = {"ngram", "ngram_gpu"}                            # take prompt_lookup_min/max
NEEDS_MODEL = {"draft_model", "eagle", "eagle3", "dflash", "dspark"}
HAS_Q = {"draft_model", "eagle", "eagle3", "mtp", "dflash", "dspark"}  # drafters with a distribution q
SAMPLE_METHODS = ("greedy", "probabilistic")              # draft_sample_method; vLLM's default is greedy
FROM_SPECVIZ = to_vllm()   # {specviz method: vLLM method}, read from the method registry
# The suffix method's own keys and defaults, as vllm/config/speculative.py (SpeculativeConfig) spells them
# (read from vllm-project/vllm at 002e77c). Its _validate_suffix_decoding needs the arctic-inference package
# and, when num_speculative_tokens is not given, sets it to suffix_decoding_max_tree_depth (a ceiling, not a length).
SUFFIX_KEYS = {"suffix_decoding_max_tree_depth": 24,      # match + draft, in tokens
               "suffix_decoding_max_cached_requests": 10000,  # earlier requests in the global tree; 0 = none
               "suffix_decoding_max_spec_factor": 1.0,    # draft <= factor x match length
               "suffix_decoding_min_token_prob": 0.1}     # continuations below this estimated probability are cut
SUFFIX_SHORT = ("depth", "cached", "factor", "minprob")  # the Serve page's widget keys
SUFFIX_HELP = ("Match plus draft stay within this many tokens (specviz's depth cap).",
               "Earlier requests kept in the global suffix tree, oldest evicted first; 0 turns the cache off "
               "(each request's own prompt is still searched).",
               f"A match of m tokens drafts at most factor × m tokens (specviz's suffix default is {SUFFIX_FACTOR:g}).",
               "A continuation is drafted only if its estimated probability is at least this (0 to 1).")
SUFFIX_DEPENDENCY = ("vLLM's suffix method runs Snowflake's ArcticInference suffix cache: install the "
                     "`arctic-inference` package beside vLLM (vLLM refuses the method without it).")
LOOKUP_MATCH_NOTE = ("specviz's lookup with the match-length rule (draft ≤ factor × the match length) has no vLLM "
                     "ngram equivalent: vLLM's ngram proposer always drafts num_speculative_tokens after a match of "
                     "prompt_lookup_min..prompt_lookup_max tokens, and has no factor key. The nearest ngram config "
                     "is the one below (the shortest match as prompt_lookup_min, k as num_speculative_tokens); the "
                     "method in vLLM that does size its drafts by the match is `suffix` "
                     "(suffix_decoding_max_spec_factor).")
NEAREST = {"medusa": "eagle3"}                            # what to use instead of a removed method
# specviz methods with no vLLM 0.33 counterpart, and what to say instead of a config.
NO_VLLM = {m: ("vLLM 0.33 has no token-recycling method: none of its speculative methods keeps the target's "
               "discarded candidates (Luo et al. 2024, arXiv 2408.08696) to draft from. The nearest weight-free "
               "methods it has are `suffix` and `ngram`, which copy from earlier text instead.")
           for m in ("recycle", "recycle-chain")}
NO_VLLM["copy-recycle"] = ("vLLM 0.33 has no token-recycling method, so this hybrid has no config; its copying half "
                           "is vLLM's `suffix` method (export suffix for that part alone).")
# rejection_sample_method: "standard" is the token-wise rule (vLLM's default), "block" Sun et al. 2024's block
# verification (specviz's --verify block), "synthetic" a benchmarking mode with given acceptance rates. Checked in
# vllm/config/speculative.py (vllm-project/vllm at 002e77c): `RejectionSampleMethod = Literal["standard",
# "synthetic", "block"]`, the field `rejection_sample_method: RejectionSampleMethod = "standard"` ("'block' uses block
# verification (Sun et al.), which jointly verifies the draft tokens as a block"); its SpeculativeMethod literal
# (ngram, medusa, mlp_speculator, draft_model, suffix, custom_class, the EAGLE/MTP/DFlash types, ngram_gpu, dspark)
# has no token-recycling method.
REJECTION_METHODS = ("standard", "synthetic", "block")

# What a specviz run does not hand to a server as is (shown on the page, per method).
CAVEATS = {
    "ngram": "Nothing to convert: prompt lookup has no weights. The search is not quite specviz's: vLLM's "
             "n-gram proposer copies from the earliest occurrence among the longest matches, specviz's default "
             "lookup from the most recent one (specviz's lookup rule 'earliest' follows vLLM's; the comparison "
             "below measures the difference). And a busy server batches many requests, so the spare compute "
             "that makes verification nearly free at batch 1 shrinks: the speedup measured here (batch 1, CPU) "
             "does not carry over — it is not a bound either way.",
    "ngram_gpu": "The same n-gram search as ngram, run on the GPU; the same notes apply.",
    "suffix": "specviz's suffix proposer follows the same rules (ArcticInference's suffix_tree.cc): a match of m "
              "tokens drafts at most factor × m, match plus draft within the depth cap, continuations below the "
              "minimum probability cut, earlier requests' outputs cached. Three differences: vLLM verifies one "
              "path of the tree, specviz the whole tree; specviz's default factor is "
              f"{SUFFIX_FACTOR:g} (vLLM's 1.0); and "
              "specviz estimates a continuation's probability among the occurrences that continue (ArcticInference "
              "among all of them). A server's cache fills from every user's requests, so what it copies depends "
              "on the traffic, not on one session as here.",
    "draft_model": "The drafter must be a Hugging Face checkpoint with the target's tokenizer. specviz's own "
                   "trained drafter is a safetensors file in specviz's layout, not a checkpoint vLLM "
                   "can load: export it as a standard Llama checkpoint (config.json + weights) first, "
                   "or name a published drafter.",
    "eagle": "vLLM loads EAGLE heads in the EAGLE project's checkpoint format, trained against the exact "
             "target you serve. specviz's EAGLE-style head is stored in specviz's own safetensors "
             "layout, so it does not carry over; use a published EAGLE checkpoint for your target or "
             "retrain with a tool that writes that format.",
    "eagle3": "Same as eagle: an EAGLE-3 checkpoint trained for this exact target is needed; specviz's "
              "head is not in that format. Which target layers it fuses is part of the draft model's config in "
              "vLLM (`eagle_aux_hidden_state_layer_ids`, read in vllm/v1/worker/gpu_model_runner.py); specviz "
              "names a layer by its output, counting from 0 (the layers are in models/eagle3.json), so check "
              "the numbering your converter uses before copying them.",
    "mtp": "Uses the target's own multi-token-prediction layers, so it works only for models that ship them; "
           "SmolLM2 does not.",
    "dflash": "A block-diffusion drafter trained for the target; specviz has none.",
    "dspark": "A drafter checkpoint trained for the target; specviz has none.",
}
SAMPLING_NOTE = ("vLLM's default draft_sample_method is greedy: the drafter proposes its argmax and q is treated "
                 "as one-hot, so at temperature > 0 a draft is kept with probability p(x) instead of "
                 "min(1, p(x)/q(x)). Still lossless. It keeps a draft with probability p(argmax q), where "
                 "\"probabilistic\" (the draft sampled from q, the full ratio, as specviz does) keeps one with "
                 "Σ min(p, q), and either can be larger: p = (0.90, 0.05, 0.05), q = (0.4, 0.3, 0.3) gives 0.90 "
                 "greedy vs 0.50 probabilistic; p = (0.3, 0.7), q = (0.6, 0.4) gives 0.30 vs 0.70.")


def kept_greedy_vs_probabilistic(p, q) -> tuple[float, float]:
    """P(draft kept) at one position when the drafter proposes its argmax and q is treated as one-hot
    (vLLM's greedy draft_sample_method: p(argmax q)), and when it samples x ~ q and the full ratio is used
    (probabilistic: Σ min(p, q)). p, q: (V,) probability vectors."""
    import torch

    p, q = torch.as_tensor(p, dtype=torch.float64), torch.as_tensor(q, dtype=torch.float64)
    return float(p[int(q.argmax())]), float(torch.minimum(p, q).sum())


def target_blocker(method: str, target: str) -> str | None:
    """Why a config that passes vLLM's config rules still cannot run for this target, when specviz knows it
    (vLLM only finds out when it loads the model): MTP needs multi-token-prediction layers in the target's
    checkpoint, which SmolLM2 does not have. None when nothing is known against it."""
    if method == "mtp" and "smollm" in target.lower():
        return (f"{target} has no multi-token-prediction layers, so vLLM cannot load this config for it: the "
                "config is well-formed, but serve MTP only with a model that ships MTP layers.")
    return None


class ConfigError(ValueError):
    """The chosen settings cannot make a valid config; the message is shown as is."""


def removed_message(method: str) -> str:
    alt = NEAREST.get(method)
    return (f"vLLM {VLLM_VERSION} no longer serves '{method}' (removed after {REMOVED[method]})."
            + (f" The nearest current equivalent is '{alt}': a head trained on the target's hidden states, "
               "which also conditions each guess on the previous one (Medusa's heads guess every position "
               "independently). It needs an EAGLE-3 checkpoint trained for your target." if alt else ""))


def build(method: str, k: int, n_min: int | None = None, n_max: int | None = None,
          model: str | None = None, temperature: float = 0.0, suffix: dict | None = None,
          verify: str = "token") -> dict:
    """specviz method ('lookup', 'suffix', 'draft', 'eagle', 'medusa') or a vLLM method name -> config dict.

    temperature > 0 with a drafter that has a distribution q adds "draft_sample_method": "probabilistic".
    suffix: {vLLM key: value} for the suffix method (SUFFIX_KEYS' names); the keys not given take vLLM's defaults.
    verify="block" (specviz's block verification) adds "rejection_sample_method": "block"."""
    if method in NO_VLLM:
        raise ConfigError(NO_VLLM[method])
    vm = FROM_SPECVIZ.get(method, method)
    if vm in REMOVED:
        raise ConfigError(removed_message(vm))
    if vm not in VLLM_METHODS:
        raise ConfigError(f"'{method}' has no vLLM speculative method (plain decoding needs no "
                          "--speculative-config)" if method == "plain" else f"unknown method '{method}'")
    cfg: dict = {"method": vm, "num_speculative_tokens": int(k)}
    if vm in NGRAM:
        lo = int(n_min if n_min is not None else 1)
        hi = int(n_max if n_max is not None else max(lo, 4))
        cfg["prompt_lookup_min"], cfg["prompt_lookup_max"] = lo, hi
    if vm in NEEDS_MODEL:
        if not model or not model.strip():
            raise ConfigError(f"method '{vm}' needs a model (a Hugging Face id or a path)")
        cfg["model"] = model.strip()
    if vm == "suffix":
        unknown = set(suffix or {}) - set(SUFFIX_KEYS)
        if unknown:
            raise ConfigError(f"unknown suffix key(s) {', '.join(sorted(unknown))} (vLLM's: {', '.join(SUFFIX_KEYS)})")
        cfg.update({key: (suffix or {}).get(key, default) for key, default in SUFFIX_KEYS.items()})
    elif suffix:
        raise ConfigError(f"suffix_decoding_* keys only apply to the suffix method, not {vm}")
    if temperature > 0 and vm in HAS_Q:
        cfg["draft_sample_method"] = "probabilistic"
    if verify == "block":
        cfg["rejection_sample_method"] = "block"
    elif verify != "token":
        raise ConfigError(f"unknown verify mode '{verify}' (token or block)")
    errors = validate(cfg)
    if errors:
        raise ConfigError("; ".join(errors))
    return cfg


def validate(cfg: dict) -> list[str]:
    """Every rule a generated config must meet for vLLM 0.33.0; [] when it is valid."""
    errs = []
    m = cfg.get("method")
    if m in REMOVED:
        errs.append(removed_message(m))
    elif m not in VLLM_METHODS:
        errs.append(f"method must be one of {', '.join(VLLM_METHODS)}, got {m!r}")
    k = cfg.get("num_speculative_tokens")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        errs.append(f"num_speculative_tokens must be an integer >= 1, got {k!r}")
    has_lookup = "prompt_lookup_min" in cfg or "prompt_lookup_max" in cfg
    if m in NGRAM:
        lo, hi = cfg.get("prompt_lookup_min"), cfg.get("prompt_lookup_max")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi)):
            errs.append(f"{m} needs integer prompt_lookup_min and prompt_lookup_max")
        elif not 1 <= lo <= hi:
            errs.append(f"{m} needs 1 <= prompt_lookup_min <= prompt_lookup_max, got {lo} and {hi}")
    elif has_lookup:
        errs.append(f"prompt_lookup_min/max only apply to ngram and ngram_gpu, not {m}")
    if m in NEEDS_MODEL and not (isinstance(cfg.get("model"), str) and cfg["model"].strip()):
        errs.append(f"method {m} needs a model")
    if m in NGRAM and "model" in cfg:
        errs.append(f"{m} takes no model")
    errs += suffix_errors(cfg)
    if "rejection_sample_method" in cfg and cfg["rejection_sample_method"] not in REJECTION_METHODS:
        errs.append(f"rejection_sample_method must be one of {', '.join(REJECTION_METHODS)}, "
                    f"got {cfg['rejection_sample_method']!r}")
    if "draft_sample_method" in cfg and cfg["draft_sample_method"] not in SAMPLE_METHODS:
        errs.append(f"draft_sample_method must be one of {', '.join(SAMPLE_METHODS)}, "
                    f"got {cfg['draft_sample_method']!r}")
    return errs


def suffix_errors(cfg: dict) -> list[str]:
    """The suffix keys' rules: only under method suffix; depth and cached requests integers (depth >= 1, cached
    >= 0), the factor above 0, the minimum probability in [0, 1]."""
    keys = [key for key in cfg if key.startswith("suffix_decoding_")]
    if cfg.get("method") != "suffix":
        return [f"{', '.join(keys)} only apply to the suffix method"] if keys else []
    errs = [f"unknown suffix key {key}" for key in keys if key not in SUFFIX_KEYS]

    def is_int(x):
        return isinstance(x, int) and not isinstance(x, bool)

    def is_num(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    depth, cached = cfg.get("suffix_decoding_max_tree_depth"), cfg.get("suffix_decoding_max_cached_requests")
    factor, prob = cfg.get("suffix_decoding_max_spec_factor"), cfg.get("suffix_decoding_min_token_prob")
    if depth is not None and not (is_int(depth) and depth >= 1):
        errs.append(f"suffix_decoding_max_tree_depth must be an integer >= 1, got {depth!r}")
    if cached is not None and not (is_int(cached) and cached >= 0):
        errs.append(f"suffix_decoding_max_cached_requests must be an integer >= 0 (0: no cache), got {cached!r}")
    if factor is not None and not (is_num(factor) and factor > 0):
        errs.append(f"suffix_decoding_max_spec_factor must be above 0, got {factor!r}")
    if prob is not None and not (is_num(prob) and 0 <= prob <= 1):
        errs.append(f"suffix_decoding_min_token_prob must be between 0 and 1, got {prob!r}")
    return errs


def to_json(cfg: dict) -> str:
    return json.dumps(cfg, separators=(", ", ": "))


def command(target: str, cfg: dict) -> str:
    """The `vllm serve` line for a target id and a config."""
    return f"vllm serve {shlex.quote(target)} --speculative-config {shlex.quote(to_json(cfg))}"


def lookup_rules(target, workload, k: int = 4, n_min: int = 1, n_max: int = 4, max_new: int = 64,
                 temperature: float = 0.0, seed: int = 0) -> dict[str, dict]:
    """Run specviz's lookup with each rule (most recent match vs vLLM's earliest) on one workload."""
    from specviz.core.sampling import SamplingConfig
    from specviz.engine import measure
    from specviz.engine.decode import DecodeConfig
    from specviz.engine.methods import encode_prompt, make_proposer
    from specviz.proposers.lookup import RULES

    ids = encode_prompt(target.tokenizer, workload.prompt, workload.chat)
    out = {}
    for rule in RULES:
        cfg = DecodeConfig(k=k, max_new_tokens=max_new, sampling=SamplingConfig(temperature), seed=seed, record=False)
        prop = make_proposer("lookup", target, n_min=n_min, n_max=n_max, lookup_rule=rule, k_rule="fixed")
        s, _ = measure.run(target, prop, ids, cfg,
                           eos_token_id=target.tokenizer.eos_token_id)
        out[rule] = {"drafted": s.drafted, "accepted": s.accepted, "passes": s.target_passes,
                     "draft_acceptance": (s.accepted / s.drafted) if s.drafted else None,
                     "tokens_per_pass": s.tokens_per_pass, "tokens": len(s.token_ids)}
    return out


DRAFT_SAMPLE_CHOICES = ("greedy keeps more", "probabilistic keeps more", "about the same (within 0.02)")


def draft_sampling(target, drafter, workload, temperature: float = 0.8, k: int = 4, max_new: int = 48,
                   positions: int = 12, seed: int = 0, progress=None) -> dict:
    """vLLM's draft_sample_method, measured both ways with the draft model at `temperature`:
    per position of one sampled reply, the chance a draft is kept — p(argmax q) when drafting greedily, Σ min(p, q)
    when sampling from q — and the tokens per pass τ of a full run each way (same prompt, seed and settings)."""
    from specviz.core.sampling import SamplingConfig
    from specviz.engine import comparisons as E, methods as M
    from specviz.teach import lab

    samp = SamplingConfig(temperature=temperature)
    reply, _ = E.run_one(target, workload, "plain", 1, None, samp, positions, seed)
    prompt = M.encode_prompt(target.tokenizer, workload.prompt, workload.chat)
    rows = []
    for j in range(min(positions, len(reply.token_ids))):
        case = lab.real_case(target, M.make_proposer("draft", target, drafter=drafter),
                             list(prompt) + reply.token_ids[:j], samp, seed)
        g, p = kept_greedy_vs_probabilistic(case.p, case.q)
        rows.append({"position": j + 1, "greedy: p(argmax q)": g, "probabilistic: Σ min(p, q)": p})
        if progress:
            progress(0.6 * (j + 1) / positions, f"position {j + 1}")
    tau = {}
    for i, (name, greedy) in enumerate((("greedy", True), ("probabilistic", False))):
        prop = M.make_proposer("draft", target, drafter=drafter, greedy_draft=greedy)
        s, _ = E.run_one(target, workload, "draft", k, None, samp, max_new, seed, proposer=prop)
        tau[name] = s.tokens_per_pass
        if progress:
            progress(0.6 + 0.2 * (i + 1), f"{name} drafting")
    mg = sum(r["greedy: p(argmax q)"] for r in rows) / len(rows) if rows else 0.0
    mp = sum(r["probabilistic: Σ min(p, q)"] for r in rows) / len(rows) if rows else 0.0
    winner = (DRAFT_SAMPLE_CHOICES[2] if abs(mg - mp) <= 0.02 else
              DRAFT_SAMPLE_CHOICES[0] if mg > mp else DRAFT_SAMPLE_CHOICES[1])
    return {"rows": rows, "mean_greedy": mg, "mean_probabilistic": mp, "winner": winner, "tau": tau,
            "settings": f"draft model at T = {temperature:g}, k = {k}, {max_new} new tokens, one run per method "
                        f"(seed {seed}); keep-chances at the first {len(rows)} positions of one sampled reply, "
                        f"on {workload.name}"}
