"""python -m specviz generate | bench | train. Bad input: one line on stderr and exit code 2."""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from specviz import runtime
from specviz.engine import workloads
from specviz.core.errors import InputError
from specviz.engine.decode import DecodeConfig
from specviz.core.errors import ModelError
from specviz.engine.models import DEFAULT
from specviz.core.sampling import SamplingConfig


def add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", default=DEFAULT, help="'default' (embedded SmolLM2-135M) or a HF id/local folder")
    p.add_argument("--drafter", default=None, help="HF id/local folder of a draft model (method draft; "
                   "default: the trained drafter in models/, for the default target)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto", help="bfloat16 (default), float32, float16")
    add_threads_arg(p)


def add_threads_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: $SPECVIZ_THREADS, else one per core up to 8; "
                        "OpenMP waits passively unless OMP_WAIT_POLICY is set)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m specviz", description="Real speculative decoding, step by step.")
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate with one method and report every step")
    g.add_argument("--method", default="lookup")
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt")
    src.add_argument("--prompt-file")
    src.add_argument("--workload", help=f"one of: {', '.join(workloads.BY_NAME)}")
    g.add_argument("--chat", action="store_true", help="wrap the prompt in the chat template")
    g.add_argument("--k", type=int, default=4)
    g.add_argument("--adaptive", action="store_true", help="adaptive draft length (k is the ceiling)")
    g.add_argument("--n", type=int, default=3)
    g.add_argument("--n-min", type=int, default=None)
    g.add_argument("--n-max", type=int, default=None)
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--top-k", type=int, default=0)
    g.add_argument("--top-p", type=float, default=1.0)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--max-new-tokens", type=int, default=64)
    g.add_argument("--json", action="store_true", help="print one JSON object")
    add_model_args(g)
    g.set_defaults(func=cmd_generate)
    # Other commands (train, bench) live in their own modules, each with add_parser(sub) that
    # registers a sub-parser and sets func=... on it.
    for modname in ("specviz.train.cli", "specviz.bench.main"):
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name != modname and not modname.startswith(e.name or "-"):
                raise
            continue
        mod.add_parser(sub)
    return ap


def read_prompt(a) -> tuple[str, bool]:
    if a.workload:
        w = workloads.get(a.workload)
        return w.prompt, w.chat or a.chat
    if a.prompt_file:
        try:
            return Path(a.prompt_file).read_text(), a.chat
        except OSError as e:
            raise InputError(f"cannot read prompt file: {e.strerror}: {a.prompt_file}") from e
    return a.prompt, a.chat


def cmd_generate(a) -> int:
    from specviz.engine.decode import Decoder
    from specviz.engine.methods import encode_prompt, make_proposer
    from specviz.engine.models import load_model

    if a.n_min is not None and a.n_max is not None and a.n_min > a.n_max:
        raise InputError(f"n-min ({a.n_min}) must not exceed n-max ({a.n_max})")
    if a.n < 1 or (a.n_min is not None and a.n_min < 1):
        raise InputError("n must be >= 1")
    cfg = DecodeConfig(k=a.k, max_new_tokens=a.max_new_tokens, seed=a.seed, adaptive=a.adaptive,
                       sampling=SamplingConfig(a.temperature, a.top_k, a.top_p), record=False)
    cfg.check()
    text, chat = read_prompt(a)
    if not text or not text.strip():
        raise InputError("the prompt is empty")
    from specviz.engine.methods import METHODS
    if a.method not in METHODS:
        raise InputError(f"unknown method '{a.method}' (choose from: {', '.join(METHODS)})")
    target = load_model(a.target, a.device, a.dtype)
    drafter = None
    if a.method == "draft" and a.drafter:   # without --drafter: the shipped trained drafter (default target)
        drafter = load_model(a.drafter, a.device, a.dtype)
    proposer = make_proposer(a.method, target, a.n, a.n_min, a.n_max, drafter)
    ids = encode_prompt(target.tokenizer, text, chat)
    dec = Decoder(target, proposer, ids, cfg, eos_token_id=target.tokenizer.eos_token_id)
    for _ in dec.run():
        pass
    s = dec.summary()
    if a.json:
        print(json.dumps({
            "text": s.text, "token_ids": s.token_ids,
            "steps": [{"drafted": st.drafted, "accepted": st.n_accepted, "emitted": st.emitted,
                       "origin": st.next_origin, "k": st.k} for st in dec.steps],
            "summary": s.as_dict()}))
    else:
        print(s.text)
        ar = "n/a" if s.acceptance_rate is None else f"{s.acceptance_rate:.2f}"
        print(f"\n[{s.method}] {len(s.token_ids)} tokens, {s.target_passes} target passes, "
              f"tokens/pass {s.tokens_per_pass:.2f}, acceptance {ar}, {s.tokens_per_s:.1f} tokens/s",
              file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    try:
        runtime.use_threads(getattr(a, "threads", None) or None)
    except ValueError as e:
        print(f"specviz: error: {e}", file=sys.stderr)
        return 2
    try:
        return a.func(a)
    except (InputError, ModelError, KeyError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"specviz: error: {msg}", file=sys.stderr)
        return 2
    return 0
