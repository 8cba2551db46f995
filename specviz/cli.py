"""python -m specviz generate | bench | train. Bad input: one line on stderr and exit code 2."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from specviz import runtime
from specviz.bench import main as bench_main
from specviz.core.errors import InputError, ModelError
from specviz.core.sampling import SamplingConfig
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.models import DEFAULT
from specviz.proposers.recycle import MAX_NODES, TREE_NODES
from specviz.train import cli as train_cli


def add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", default=DEFAULT, metavar="MODEL",
                   help="the target model: 'default' (the embedded SmolLM2-135M-Instruct), a Hugging Face id "
                        "already in the local cache, or a local folder (default: %(default)s)")
    p.add_argument("--drafter", default=None, metavar="MODEL",
                   help="draft model for --method draft: a Hugging Face id or local folder with the target's "
                        "tokenizer (default: the trained drafter in models/, trained for the default target)")
    p.add_argument("--device", default="auto",
                   help="where to run the models: auto, cpu, cuda, cuda:N or mps; auto = a CUDA GPU when there "
                        "is one, else the CPU (Apple's mps only when named) (default: %(default)s)")
    p.add_argument("--dtype", default="auto",
                   help="weight and activation type: auto, bfloat16, float32 or float16; auto = the faster of float32 "
                        "and the device's half type (bfloat16; float16 on a CUDA GPU without native bfloat16) for this "
                        "method, timed once per machine and remembered in ~/.cache/specviz/dtype.json "
                        "($SPECVIZ_CACHE_DIR); the summary says which ran and why (default: %(default)s)")
    add_threads_arg(p)


def add_threads_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: $SPECVIZ_THREADS, else one per core up to 8; "
                        "a count you set is kept; otherwise the count follows the load: one thread per core left free)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m specviz", description="Real speculative decoding, step by step.")
    sub = ap.add_subparsers(dest="command", required=True)
    add_generate(sub)
    r = sub.add_parser("replay", help="print a recorded run (a recording file) as generate --json would, "
                                      "with no model loaded")
    r.add_argument("file", metavar="FILE", help="a recording: written by generate --record or the app's download")
    r.set_defaults(func=cmd_replay)
    # Other commands (train, bench) live in their own modules, each with add_parser(sub) that
    # registers a sub-parser and sets func=... on it.
    for module in (train_cli, bench_main):
        module.add_parser(sub)
    return ap


def add_generate(sub) -> None:
    """`generate`: its prompt, the method's settings, the sampling, what it prints."""
    from specviz.engine.methods import DEFAULT_METHOD, REGISTRY

    g = sub.add_parser("generate", help="generate with one method and report every step",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="methods:\n" + "\n".join(f"  {m:<8} {s.label}" for m, s in REGISTRY.items()))
    g.add_argument("--method", default=None, metavar="METHOD",
                   help=f"how drafts are proposed, one of: {', '.join(REGISTRY)} (listed below; default: the "
                        f"training-free method the committed bench of this machine's kind chose, else "
                        f"{DEFAULT_METHOD})")
    _prompt_args(g)
    _draft_args(g)
    _lookup_args(g)
    _tree_args(g)
    _sampling_args(g)
    _output_args(g)
    add_model_args(g)
    g.set_defaults(func=cmd_generate)


def _prompt_args(g) -> None:
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt", help="the prompt text (one of --prompt, --prompt-file, --workload is required)")
    src.add_argument("--prompt-file", metavar="PATH",
                     help="read the prompt from a text file; its one final newline is dropped")
    src.add_argument("--workload", metavar="NAME",
                     help=f"a built-in prompt, one of: {', '.join(workloads.BY_NAME)}")
    src.add_argument("--session", metavar="NAME",
                     help="a built-in session: several requests about the same material, run in order, one of: "
                          f"{', '.join(workloads.SESSION_BY_NAME)}")
    g.add_argument("--session-cache", default="on", metavar="{on,off}",
                   help="--session with suffix: remember each finished request for the next ones (on), or start "
                        "every request with an empty cache (off) (default: %(default)s)")
    g.add_argument("--chat", action="store_true",
                   help="wrap the prompt in the model's chat template (built-in workloads set it themselves; "
                        "default: off)")


def _draft_args(g) -> None:
    from specviz.proposers.lookup import MAX_MATCH

    g.add_argument("--k", type=int, default=None,
                   help="draft length: tokens proposed per step, >= 1; for methods that size their own drafts "
                        f"(lookup with --k-rule match, suffix) the most per step (default: {MAX_MATCH} for those, "
                        "as vLLM's suffix method; 4 for the others)")
    g.add_argument("--adaptive", action="store_true",
                   help="adaptive draft length: k grows after full acceptance and shrinks after rejections, "
                        "up to --k (default: off)")


def _lookup_args(g) -> None:
    from specviz.core.suffix import MAX_SPEC_FACTOR, SUFFIX_FACTOR
    from specviz.proposers.lookup import K_RULES, MATCH_FACTOR, MATCH_MIN, MAX_MATCH, RULES

    g.add_argument("--n", type=int, default=None,
                   help="lookup: length of the context tail to match, >= 1; with --k-rule match the shortest match "
                        f"that drafts (default: 3 for --k-rule fixed, {MATCH_MIN} for match)")
    g.add_argument("--n-min", type=int, default=None,
                   help="lookup: shortest tail to try; with --n-max the widest match wins (default: --n)")
    g.add_argument("--n-max", type=int, default=None, help="lookup: longest tail to try (default: --n)")
    g.add_argument("--lookup-rule", default="recent", metavar="RULE",
                   help=f"lookup: which earlier occurrence to copy from, one of: {', '.join(RULES)}. recent = the most "
                        "recent (specviz), earliest = the earliest of the longest matches (vLLM's n-gram proposer) "
                        "(default: %(default)s)")
    g.add_argument("--k-rule", default="match", metavar="RULE",
                   help=f"lookup: how many tokens to draft, one of: {', '.join(K_RULES)}. fixed = k whenever the "
                        "n-token tail matches (the k/n sweep's rule); match = as far as the match goes: the longest "
                        "earlier match of the tail, m tokens (at least --n, counted up to --n-max or "
                        f"{MAX_MATCH}), drafts --spec-factor × m tokens, at most --k (default: %(default)s)")
    g.add_argument("--spec-factor", type=float, default=None, metavar="F",
                   help="lookup --k-rule match and suffix: draft at most F × the match length, > 0 "
                        f"(default: {MATCH_FACTOR} for lookup, {SUFFIX_FACTOR} for suffix, measured on this CPU; "
                        f"vLLM's suffix_decoding_max_spec_factor defaults to {MAX_SPEC_FACTOR})")


def _tree_args(g) -> None:
    from specviz.core.suffix import MAX_TREE_DEPTH, MIN_TOKEN_PROB

    g.add_argument("--max-depth", type=int, default=MAX_TREE_DEPTH,
                   help="suffix: the longest match plus draft, >= 2 (vLLM's suffix_decoding_max_tree_depth; "
                        "default: %(default)s)")
    g.add_argument("--min-token-prob", type=float, default=MIN_TOKEN_PROB, metavar="P",
                   help="suffix: leave out continuations seen in under this fraction of the matches, in [0, 1] "
                        "(vLLM's suffix_decoding_min_token_prob; default: %(default)s)")
    g.add_argument("--tree-size", type=int, default=None, metavar="N",
                   help=f"recycle and copy-recycle: the static tree's nodes, 1-{MAX_NODES} (default: {TREE_NODES})")
    g.add_argument("--verify", default="token", metavar="{token,block}",
                   help="how a chain of drafts is verified: token = token by token (Leviathan et al.), block = the "
                        "chain jointly (Sun et al. 2024, arXiv 2403.10444; vLLM's rejection_sample_method "
                        "'block'): as lossless, never fewer tokens kept in expectation; chain methods only "
                        "(default: %(default)s)")
    g.add_argument("--gate", default="off", metavar="{off,hit-rate,pays}",
                   help="stop drafting while recent drafts did badly, a probe every 4th step (proposers/gated.py): "
                        "hit-rate = while α̂ of the last 8 drafts < 0.3; pays = while the last 8 drafting passes did "
                        "not pay on this machine's kind, kept + 1 < v(drafted) with the v of the committed bench of "
                        "that kind (default: %(default)s)")


def _sampling_args(g) -> None:
    g.add_argument("--temperature", type=float, default=0.0,
                   help="0 = greedy (argmax); above 0 samples, and the acceptance test is the lossless "
                        "min(1, p/q) rule (default: %(default)s)")
    g.add_argument("--top-k", type=int, default=0,
                   help="keep only the k most likely tokens; 0 = off (default: %(default)s)")
    g.add_argument("--top-p", type=float, default=1.0,
                   help="keep the smallest set of tokens with this much probability; 1 = off (default: %(default)s)")
    g.add_argument("--seed", type=int, default=0, help="random seed for sampling (default: %(default)s)")


def _output_args(g) -> None:
    g.add_argument("--max-new-tokens", type=int, default=64,
                   help="stop after this many generated tokens (or at end of sequence) (default: %(default)s)")
    g.add_argument("--json", action="store_true",
                   help="print one JSON object (text, ids, every step, summary) instead of text (default: off)")
    g.add_argument("--record", metavar="FILE", default=None,
                   help="also write the run as a recording (JSON: settings, model fingerprint, environment, every "
                        "step, timings) that `replay FILE` and the app's Step through open without a model "
                        "(default: off)")
    g.add_argument("--against-plain", type=int, default=0, metavar="REPEATS",
                   help="also run plain decoding interleaved, REPEATS times, and report the measured speedup "
                        "(median of per-repeat ratios, with its spread) and greedy equality (default: off)")


def read_prompt(a) -> tuple[str, bool]:
    if a.workload:
        w = workloads.get(a.workload)
        return w.prompt, w.chat or a.chat
    if a.prompt_file:
        try:
            return strip_final_newline(Path(a.prompt_file).read_text()), a.chat
        except OSError as e:
            raise InputError(f"cannot read prompt file: {e.strerror}: {a.prompt_file}") from e
    return a.prompt, a.chat


def strip_final_newline(text: str) -> str:
    """A POSIX text file ends with one newline; it is not part of the prompt (only that one goes)."""
    return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text


def generate_settings(a) -> tuple[dict, DecodeConfig]:
    """generate's method settings and DecodeConfig, every one checked before a model loads (InputError)."""
    from specviz.engine import methods as M

    settings = dict(n=a.n, n_min=a.n_min, n_max=a.n_max, lookup_rule=a.lookup_rule, k_rule=a.k_rule,
                    spec_factor=a.spec_factor, suffix=dict(max_depth=a.max_depth, min_prob=a.min_token_prob),
                    recycle=None if a.tree_size is None else dict(nodes=a.tree_size))
    M.check_settings(a.method, **settings)   # the registry's builder refuses bad settings before the model loads
    if a.against_plain < 0:
        raise InputError("--against-plain takes a number of repeats >= 1")
    k = a.k if a.k is not None else (M.SELF_SIZED_CAP if M.self_sized(a.method, a.k_rule) else 4)
    M.check_verify(a.method, a.verify)
    cfg = DecodeConfig(k=k, max_new_tokens=a.max_new_tokens, seed=a.seed, adaptive=a.adaptive,
                       sampling=SamplingConfig(a.temperature, a.top_k, a.top_p), record=False, verify=a.verify)
    cfg.check()
    if a.session_cache not in ("on", "off"):
        raise InputError(f"--session-cache takes on or off, got '{a.session_cache}'")
    if a.gate not in ("off", "hit-rate", "pays"):
        raise InputError(f"--gate takes off, hit-rate or pays, got '{a.gate}'")
    if a.gate != "off" and a.method == "plain":
        raise InputError("--gate gates a method's drafts; plain decoding drafts nothing")
    if a.session and a.record:
        raise InputError("--record writes one run; a --session runs several")
    return settings, cfg


def cmd_generate(a) -> int:
    from specviz.engine import autodtype, measure
    from specviz.engine.methods import encode_prompt, make_proposer
    from specviz.engine.models import load_model

    if a.method is None:   # the default: chosen per machine kind from its committed bench (bench/results.py)
        from specviz.bench.results import default_method
        from specviz.engine.device import machine
        a.method = default_method(machine(a.device))[0]
    settings, cfg = generate_settings(a)
    if a.gate != "off":
        from specviz.bench.results import gate_for
        from specviz.engine.device import machine
        settings["gate"] = gate_for(a.gate, a.method, machine(a.device))
    if a.session:
        session = workloads.get_session(a.session)
    else:
        text, chat = read_prompt(a)
        if not text or not text.strip():
            raise InputError("the prompt is empty")
    purpose = "plain" if a.method == "plain" and not a.against_plain else "speculative"
    target = autodtype.load(a.target, a.device, a.dtype, purpose)   # auto: chosen by timing this machine, once
    drafter = None
    if a.method == "draft" and a.drafter:   # without --drafter: the shipped trained drafter (default target)
        drafter = load_model(a.drafter, target.device, target.dtype)
    def build():
        return make_proposer(a.method, target, drafter=drafter, **settings)
    proposer = build()   # bad settings stop here, before anything runs
    if a.session:
        return run_session(a, target, session, build, cfg)
    ids = encode_prompt(target.tokenizer, text, chat)
    eos = target.tokenizer.eos_token_id
    check = None
    if a.against_plain:
        check = measure.against_plain(target, lambda: proposer, ids, cfg, eos, repeats=a.against_plain)
        s, steps = check.summary, check.steps
    else:
        s, steps = measure.run(target, proposer, ids, cfg, eos)
    if a.record:
        write_recording(a, target, ids, s, steps, sole_reason(proposer), gate_words(proposer))
    if a.json:
        out = run_json(s, steps)
        out["summary"].update(where_json(target))
        gate = gate_words(proposer)
        if gate:                                          # --gate: the rule that ran, in its own words
            out["summary"]["gate"] = gate
        why = sole_reason(proposer)
        if why:                                           # lookup's sole rule: on or off by this machine's wide pass
            out["summary"]["sole_rule"] = why
        if check is not None:
            out["against_plain"] = {"speedup": check.speedup, "spread": check.spread, "ratios": check.ratios,
                                    "too_noisy": check.too_noisy,
                                    "identical": check.identical if check.compared else None,
                                    "divergence": check.divergence.describe() if check.divergence else None}
        print(json.dumps(out))
        return 0
    print_generated(a, target, proposer, cfg, s, check)
    return 0


def print_generated(a, target, proposer, cfg: DecodeConfig, s, check) -> None:
    """generate's text: the output, then on stderr what ran (its describe()), its figures and the machine."""
    from specviz.engine.experiment import Experiment, Setting

    print(s.text)
    f = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
    ex = Experiment((Setting.of(proposer, cfg),), (a.workload or "the given prompt",), cfg.max_new_tokens,
                    cfg.sampling.temperature, cfg.sampling.top_k, cfg.sampling.top_p, repeats=a.against_plain or 1,
                    against_plain=bool(a.against_plain))   # what ran, read back from the proposer and settings
    print(f"\n[{ex.describe()}]", file=sys.stderr)
    print(f"[{s.method}] {len(s.token_ids)} tokens, {s.target_passes} target passes, "
          f"tokens/pass τ {s.tokens_per_pass:.2f}, α (kept ÷ tested) {f(s.alpha)}, "
          f"α̂ (kept ÷ drafted) {f(s.draft_acceptance_rate)}, {s.tokens_per_s:.1f} tokens/s", file=sys.stderr)
    print(where_text(target), file=sys.stderr)
    if sole_reason(proposer):
        print(f"[lookup on this machine] {sole_reason(proposer)}", file=sys.stderr)
    if check is not None:
        same = ("" if not check.compared else "; same tokens as plain greedy decoding" if check.identical
                else f"; {check.divergence.describe()}")
        print(f"[against plain] speedup {check.quote()}{same}", file=sys.stderr)


def sole_reason(proposer) -> str | None:
    """Why the registry's lookup (behind a gate too) took the sole rule or not on this machine; None for others."""
    return getattr(getattr(proposer, "inner", proposer), "sole_reason", None)


def gate_words(proposer) -> str | None:
    """The gate a --gate run drafted behind, in its own words; None without one."""
    gate = getattr(proposer, "gate", None)
    return None if gate is None else gate.words()


def run_json(s, steps) -> dict:
    """What --json prints for one run (and `replay` for a recording of one)."""
    return {"text": s.text, "token_ids": s.token_ids, "steps": [step_json(st) for st in steps], "summary": s.as_dict()}


def write_recording(a, target, ids, s, steps, sole_rule: str | None = None, gate: str | None = None) -> None:
    from specviz.core.recording import dumps
    from specviz.engine.recorder import step_recording

    keys = ("method", "k", "adaptive", "n", "n_min", "n_max", "lookup_rule", "k_rule", "spec_factor", "max_depth",
            "min_token_prob", "gate", "temperature", "top_k", "top_p", "seed", "max_new_tokens", "workload", "chat")
    settings = {k: getattr(a, k) for k in keys}
    settings["max_new"] = a.max_new_tokens
    if sole_rule:
        settings["sole_rule"] = sole_rule          # lookup's rule on the machine that ran it: replay says it again
    if gate:
        settings["gate_rule"] = gate               # the gate's rule in words: replay and Step through say it
    text = dumps(step_recording(target, settings, ids, s, steps, extra={"source": "cli"}))
    try:
        Path(a.record).write_text(text)
    except OSError as e:
        raise InputError(f"cannot write the recording: {e.strerror}: {a.record}") from e


def cmd_replay(a) -> int:
    """A recording of one run, printed as generate --json prints it: no model is loaded."""
    from specviz.core.recording import loads

    try:
        data = Path(a.file).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read the recording: {e.strerror}: {a.file}") from e
    rec = loads(data)
    if len(rec.runs) != 1:
        raise InputError(f"this recording holds {len(rec.runs)} runs ({rec.kind}); replay prints one run: open it "
                         "on the app's Compare page")
    run = rec.runs[0]
    out = run_json(run.summary, run.steps)
    for key, said in (("sole_rule", "sole_rule"), ("gate_rule", "gate")):
        if rec.settings.get(key):
            out["summary"][said] = rec.settings[key]
    print(json.dumps(out))
    return 0


def where_json(target) -> dict:
    """What the summary says about where it ran: the machine (engine/device.machine, dtype included) and why that
    dtype (asked for by name, or auto's measured choice)."""
    from specviz.engine.device import machine
    return {"machine": machine(target.device, target.dtype), "dtype_reason": target.dtype_reason}


def where_text(target) -> str:
    from specviz.engine.device import describe_machine, machine
    return f"[machine] {describe_machine(machine(target.device, target.dtype))}\n[dtype] {target.dtype_reason}"


def step_json(st) -> dict:
    """One step for --json: the draft (with its tree's parents, -1 = the root) and, for copying methods, where
    each drafted token was seen (this prompt, this output, or an earlier request of the session)."""
    out = {"drafted": st.drafted, "accepted": st.n_accepted, "emitted": st.emitted, "origin": st.next_origin,
           "k": st.k, "draft_s": st.draft_s, "verify_s": st.verify_s}
    if st.is_tree:
        out["parents"], out["path"] = st.parents, st.path
    if st.seen_in is not None:
        out["sources"] = st.seen_in
    if st.held is not None:    # no draft on purpose (a shut gate), why
        out["held"] = st.held
    if st.feature_layers is not None:
        out["feature_layers"] = st.feature_layers
    if st.block is not None:   # block verification: the weights of keeping X_1..X_i, beside token-wise's tests
        w = st.block.weights
        out["block"] = {"h": w.h, "backed": w.backed, "ratios": w.ratios, "draws": st.block.draws,
                        "token_wise_kept": st.block.token_wise_kept}
    return out


def run_session(a, target, session, build, cfg) -> int:
    """--session: the session's requests in order with one proposer (the cross-request cache on or off),
    per request and in total; with --against-plain, plain decoding's session interleaved, and the speedups."""
    from specviz.engine import sessions as SE
    from specviz.engine.measure import quote

    cache = a.session_cache == "on"
    if a.against_plain:
        from specviz.engine.measure import plain_config
        got, plains = SE.session_against_plain(target, session, {a.method: (build, cfg, cache)}, plain_config(cfg),
                                              a.against_plain)
        m = got[a.method]
        r, per = m.typical_run, m.request_speedups()
    else:
        m, r, per = None, SE.run_session(target, session, build, cfg, cache, method=a.method), None
    t = r.total
    if a.json:
        out = {"session": session.name, "method": a.method, "cache": cache,
               "requests": [{"request": name, **s.as_dict()} for name, s in zip(r.names, r.requests)],
               "total": {"tokens": t.tokens, "wall_s": t.wall_s, "tokens_per_s": t.tokens_per_s,
                         "target_passes": t.target_passes, "tokens_per_pass": t.tokens_per_pass,
                         **where_json(target)}}
        if m is not None:
            out["against_plain"] = {"speedup": m.speedup, "spread": m.spread, "ratios": m.ratios,
                                    "request_speedups": per, "same_as_plain": m.same_as_plain}
        print(json.dumps(out))
        return 0
    print(f"session {session.name}: {session.task}; {a.method}, cross-request cache {a.session_cache}")
    for i, (name, s) in enumerate(zip(r.names, r.requests)):
        vs = "" if per is None else f", {per[i]:.2f}× plain"
        same = "" if m is None or m.same_as_plain[i] is None else ("" if m.same_as_plain[i] else ", differs from plain")
        print(f"  {i + 1}. {name}: {len(s.token_ids)} tokens, τ {s.tokens_per_pass:.2f}, "
              f"{s.tokens_per_s:.1f} tokens/s{vs}{same}")
    print(f"  total: {t.tokens} tokens in {t.wall_s:.1f} s, τ {t.tokens_per_pass:.2f}, {t.tokens_per_s:.1f} tokens/s")
    print(where_text(target))
    if m is not None:
        print(f"[against plain] whole-session speedup {quote(m.speedup, m.spread, len(m.runs))}")
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
