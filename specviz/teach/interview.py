"""Interview prep and the guided walkthrough: each question is answered by a measurement run on the spot.

A measurement is a function (target, drafter, small) -> dict of numbers (already formatted) plus a
'run' line saying what was run; answers are templates filled from that dict, so the number quoted
is always the one just measured. small=True keeps runs test-sized.

A measurement that runs the model plans its run first (`plan_*`: an engine.experiment.Experiment), runs that
plan, and says what ran with the plan's describe(); the guess asked before it names the same plan
(`guess_for`), so the prompt and the run that scores it cannot disagree.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from specviz.core.costmodel import draft_cost, plain_step_time, speedup
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median
from specviz.engine import comparisons as E, sweeps as SW
from specviz.engine.experiment import Experiment, Setting
from specviz.engine.methods import DEFAULT_K_RULE, HEADS, REGISTRY, make_proposer, names, self_sized, trained_available
from specviz.engine.passcost import measure_v
from specviz.engine.workloads import COPY, NOVEL, get, of_kind
from specviz.teach import checkpoints as CK, lab, mismatch, serving
from specviz.teach.checkpoints import gain_lost
from specviz.teach.guess import Guess

SAMPLED = SamplingConfig(temperature=0.8)
LEVELS = ["junior", "middle", "senior", "principal"]


def _f(x, spec=".2f") -> str:
    return "n/a" if x is None else format(x, spec)


# -- measurements -------------------------------------------------------------------------------
def has_drafter(drafter) -> bool:
    return drafter is not None or bool(trained_available().get("drafter"))


def _compare(target, ex: Experiment, drafter=None, progress=None):
    """Run a planned comparison in one interleaved E.compare (every method against the same plain runs)."""
    lk = next((s for s in ex.settings if s.method == "lookup"), None)
    k_rule = lk.k_rule if lk else DEFAULT_K_RULE
    methods = [s.method for s in ex.settings]
    ks = list(dict.fromkeys(s.k for s in ex.settings if not self_sized(s.method, k_rule))) or [ex.settings[0].k]
    if E.compare_settings(methods, ks, k_rule) != [(s.method, s.k) for s in ex.settings]:
        raise ValueError(f"E.compare cannot run this plan as planned: {ex.describe()}")
    return E.compare(target, [get(w) for w in ex.workloads], methods, ks, n=lk.n if lk else None,
                     sampling=ex.sampling, max_new_tokens=ex.new_tokens, repeats=ex.repeats, drafter=drafter,
                     progress=progress, k_rule=k_rule)


def plan_lookup_vs_draft(small: bool, with_drafter: bool) -> Experiment:
    return Experiment((Setting.resolve("lookup"),) + ((Setting.resolve("draft", 4),) if with_drafter else ()),
                      (of_kind(COPY)[0].name, of_kind(NOVEL)[0].name), 8 if small else 40, SAMPLED.temperature)


def lookup_vs_draft(target, drafter, small: bool, progress=None) -> dict:
    """Lookup (and the draft model, when one exists) vs plain on a copy-heavy and a novel prompt."""
    ex = plan_lookup_vs_draft(small, has_drafter(drafter))
    rows = {(r["kind"], r["method"]): r for r in E.table(_compare(target, ex, drafter, progress))}
    out = {"run": ex.describe()}
    for kind, tag in ((COPY, "copy"), (NOVEL, "novel")):
        for m in ("lookup", "draft"):
            r = rows.get((kind, m))
            out[f"{m}_{tag}_speedup"] = _f(r["speedup"]) if r else "not measured (no drafter)"
            out[f"{m}_{tag}_times"] = f"{_f(r['speedup'])}×" if r else "not measured (no drafter shipped)"
            out[f"{m}_{tag}_tpp"] = _f(r["tokens_per_pass"]) if r else "n/a"
            if r:
                out[f"{m}_{tag}_speedup_x"] = float(r["speedup"])
    return out


def tokenizer_check(target, drafter, small: bool, progress=None) -> dict:
    d = mismatch.demo(target, mismatch.other_drafter(), "The lighthouse keeper kept a logbook.")
    return {"run": "tokenized one sentence with the target's tokenizer and a small BPE trained on other text, "
                   "then asked specviz to pair them",
            "target_vocab": f"{d.target_vocab:,}", "drafter_vocab": f"{d.drafter_vocab:,}",
            "target_ids": str(d.target_ids[:6]), "drafter_ids": str(d.drafter_ids[:6]),
            "refusal": d.refusal or "accepted (unexpected)", "verdict": "refused" if d.refusal else "accepted"}


def heads_cost(target, drafter, small: bool, progress=None) -> dict:
    """Bytes each proposer adds, and what a checkpoint swap costs each, from files and the model."""
    files = artifact_bytes()
    heads = {m: b for m, b in files.items() if b and m != "drafter"}
    return {"run": "summed the shipped artifact files in models/ and the target's parameters and cache size",
            "target_mb": _f(target.param_bytes() / 2**20, ".0f"),
            "kv_kb": _f(target.kv_bytes_per_token() / 1024, ".1f"),
            "kv_kb_x": target.kv_bytes_per_token() / 1024,
            "heads_mb": (", ".join(f"{m} {b / 2**20:.1f} MB" for m, b in heads.items())
                         if heads else "no heads shipped yet"),
            "drafter_mb": _f(files["drafter"] / 2**20, ".1f") if files["drafter"] else "no drafter shipped yet"}


def artifact_bytes(folder=None) -> dict[str, int]:
    """{artifact: bytes of its weights file} for the drafter and every heads artifact of the method registry
    (0: not shipped). Each is its own file, <name>.safetensors: a glob such as *eagle* would also count eagle3."""
    from specviz.engine.artifacts import MODELS_DIR
    d = MODELS_DIR if folder is None else Path(folder)
    heads = dict.fromkeys(REGISTRY[m].artifact for m in names(family=HEADS) if REGISTRY[m].artifact)
    return {a: (d / f"{a}.safetensors").stat().st_size if (d / f"{a}.safetensors").exists() else 0
            for a in [*heads, "drafter"]}


def _swap_head() -> str | None:
    have = trained_available()
    return next((m for m in ("eagle", "medusa") if have.get(m)), None)


def plan_heads_on_finetune(small: bool, with_drafter: bool) -> Experiment:
    return Experiment((Setting.resolve(_swap_head() or "eagle", 4),), (of_kind(NOVEL)[0].name,), 8 if small else 48,
                      target="the base target and on its LoRA fine-tune")


def heads_on_finetune(target, drafter, small: bool, progress=None, load_tuned=None) -> dict:
    """The shipped heads on the base target and on its LoRA fine-tune (greedy, k = 4, a novel prompt): the τ
    they lose when the checkpoint changes under them, plus what heads_cost() reads from the files.
    load_tuned(target): the fine-tuned target (the app passes its cached one; default: loaded here)."""
    from specviz.engine import artifacts

    out = heads_cost(target, drafter, small)
    have = trained_available()
    head = _swap_head()
    ex = plan_heads_on_finetune(small, False)
    w, n_new, k = get(ex.workloads[0]), ex.new_tokens, ex.settings[0].k
    out.update({"head": head or "heads", "tau_base": "n/a", "tau_tuned": "n/a", "tau_lost": "n/a",
                "share_lost": "n/a", "tau_lost_x": None})
    if head is None or not have.get("lora"):
        out["run"] = "nothing measured: the heads or the fine-tuned target are not in models/"
        return out
    try:
        tuned = (load_tuned or artifacts.load_finetuned_target)(target)
        rows, _ = CK.checkpoint_swap(target, tuned, w, [head], k, ex.sampling, n_new, progress=progress)
    except Exception as e:  # noqa: BLE001 - heads that do not fit this target: the answer says why
        out["run"] = f"nothing measured: {head} on this target failed ({e})"
        return out
    tau = {r["target"]: r["tokens_per_pass"] for r in rows if r["method"] == head}
    lost = tau["base"] - tau["fine-tuned"]
    share = gain_lost(tau["base"], tau["fine-tuned"])
    out.update({"run": f"{ex.describe()}; plus the shipped artifact files",
                "tau_base": _f(tau["base"]), "tau_tuned": _f(tau["fine-tuned"]), "tau_lost": _f(lost),
                "share_lost": "n/a" if share != share else f"{share:.0%}", "tau_lost_x": lost})
    return out


def plan_serial(small: bool, with_drafter: bool) -> Experiment:
    return Experiment(tuple(Setting.resolve("draft", k) for k in (1, 2, 4)), (of_kind(COPY)[0].name,),
                      6 if small else 24)


def serial_drafting(target, drafter, small: bool, progress=None) -> dict:
    """Draft time per step against k: a model drafter's k passes run one after another."""
    ex = plan_serial(small, drafter is not None)
    w, n_new = get(ex.workloads[0]), ex.new_tokens
    d_model = drafter if drafter is not None else target  # stand-in: the target drafts for itself
    who = "the draft model" if drafter is not None else "the target itself as its own drafter (no drafter shipped)"
    plain, psteps = E.run_one(target, w, "plain", 1, None, ex.sampling, n_new)
    t1 = plain_step_time(psteps)
    per_k = {}
    for i, s in enumerate(ex.settings):
        _, steps = E.run_one(target, w, "draft", s.k, None, ex.sampling, n_new,
                             proposer=make_proposer("draft", target, drafter=d_model))
        per_k[s.k] = (median([x.draft_s for x in steps if x.n_drafted == s.k]) or 0.0, draft_cost(steps, t1))
        if progress:
            progress((i + 1) / 3, f"k={s.k}")
    v5 = measure_v(target, ks=(5,), repeats=3)[5]
    return {"run": f"{ex.describe()}, the drafter being {who}; plain decoding for t1; v(5) measured",
            "t1_ms": _f(1000 * t1, ".1f"), "d1_ms": _f(1000 * per_k[1][0], ".1f"),
            "d2_ms": _f(1000 * per_k[2][0], ".1f"), "d4_ms": _f(1000 * per_k[4][0], ".1f"),
            "c": _f(per_k[4][1]), "v5": _f(v5), "cap_tenth": _f(speedup(1.0, 5, 0.1, v5)),
            "ratio_x": per_k[4][0] / per_k[1][0] if per_k[1][0] > 0 else 0.0}


def plan_chat(small: bool, with_drafter: bool, temperature: float = SAMPLED.temperature) -> Experiment:
    return Experiment((Setting.resolve("lookup"),), ("chat",), 8 if small else 48, temperature)


def lookup_on_chat(target, drafter, small: bool, progress=None) -> dict:
    plans = {"s": plan_chat(small, False), "g": plan_chat(small, False, 0.0)}
    out = {"run": f"{plans['s'].describe()}; then the same greedy"}
    for tag, ex in plans.items():
        runs = _compare(target, ex, progress=progress)
        r = next(x for x in E.table(runs) if x["method"] == "lookup")
        s = next(x.summary for x in runs if x.method == "lookup")
        out.update({f"acc_{tag}": _f(r["draft_acceptance_rate"]), f"tpp_{tag}": _f(r["tokens_per_pass"]),
                    f"speedup_{tag}": _f(r["speedup"]), f"drafted_{tag}": str(s.drafted),
                    f"passes_{tag}": str(s.target_passes), f"rep_{tag}": _f(r["repetition"], ".0%"),
                    f"acc_{tag}_x": r["draft_acceptance_rate"]})  # None (n/a): nothing drafted, not scored
    out["greedy_verdict"] = greedy_verdict(out["tpp_g"], out["tpp_s"])
    return out


def greedy_verdict(tpp_g: str, tpp_s: str, margin: float = 0.1) -> str:
    """How lookup's τ under greedy decoding compares with sampled: a gap within `margin` is 'about the same'."""
    gap = float(tpp_g) - float(tpp_s)
    if gap > margin:
        return (f"higher under greedy decoding (τ {tpp_g} vs {tpp_s}), because the greedy output repeats itself "
                "and lookup copies the repeats")
    if gap < -margin:
        return f"lower under greedy decoding here (τ {tpp_g} vs {tpp_s})"
    return f"about the same under greedy decoding here (τ {tpp_g} vs {tpp_s})"


def plan_translation(small: bool, with_drafter: bool) -> Experiment:
    return Experiment((Setting.resolve("lookup"),), ("translate",), 8 if small else 64, SAMPLED.temperature)


def lookup_on_translation(target, drafter, small: bool, progress=None) -> dict:
    """Lookup on a translation: built from the input, but its token runs are not in the context."""
    ex = plan_translation(small, False)
    r = next(x for x in E.table(_compare(target, ex, progress=progress)) if x["method"] == "lookup")
    return {"run": ex.describe(), "speedup": _f(r["speedup"]),
            "tpp": _f(r["tokens_per_pass"]), "acc": _f(r["draft_acceptance_rate"]), "speedup_x": float(r["speedup"])}


def verify_cost(target, drafter, small: bool, progress=None) -> dict:
    v = measure_v(target, ks=(1, 4, 8), repeats=3 if small else 7, progress=progress)
    # each v(k) with its spread over rounds; a value whose spread exceeds its distance from 1 is not quoted
    cost4 = ("about one plain step (too noisy here to tell it from 1: re-measure)" if v.too_noisy(4)
             else f"{v[4]:.2f} plain steps")
    return {"run": "timed decode-loop steps that verify k+1 new tokens against plain one-token steps "
                   "(medians of per-round ratios, spread = IQR or range over rounds)",
            "v1": v.quote(1), "v4": v.quote(4), "v8": v.quote(8), "cost4": cost4,
            "gain4": _f(speedup(0.7, 4, 0.0, 1.0 if v.too_noisy(4) else v[4])), "v4_x": float(v[4])}


def lossless_toy(target, drafter, small: bool, progress=None) -> dict:
    p, q = lab.pair(*lab.PRESETS["q far from p"])
    sim = lab.simulate(p, q, 2000 if small else 10000, progress=progress)
    return {"run": f"{sim.trials} speculative draws through specviz's verifier, p and q far apart",
            "tv_p": _f(sim.tv_to_p[-1], ".3f"), "tv_q": _f(sim.tv_to_q[-1], ".3f"),
            "kept": _f(sim.accepted / sim.trials, ".3f"), "theory": _f(lab.stats(p, q).acceptance, ".3f"),
            "kept_x": sim.accepted / sim.trials, "p_text": lab.PRESETS["q far from p"][0],
            "q_text": lab.PRESETS["q far from p"][1]}


SWEEP_KS = [1, 3, 6, 10, 16]  # the k grid of the walkthrough's draft-length stop


def plan_sweep(small: bool, with_drafter: bool) -> Experiment:
    """The k lesson: lookup's fixed rule (k tokens per match of n = 3) at every k of the grid."""
    return Experiment(tuple(Setting.resolve("lookup", k, 3, "fixed") for k in ([1, 3] if small else SWEEP_KS)),
                      (of_kind(COPY)[0].name,), 6 if small else 32)


def lookup_sweep(target, drafter, small: bool, progress=None) -> dict:
    ex = plan_sweep(small, False)
    ks, n = [s.k for s in ex.settings], ex.settings[0].n
    pts, _ = SW.sweep(target, get(ex.workloads[0]), "lookup", ks, [n], ex.sampling, ex.new_tokens, progress=progress,
                     k_rule=ex.settings[0].k_rule, repeats=ex.repeats)
    best = max(pts, key=lambda p: p.speedup)
    edge = (" It is the largest k tried, so a larger k might do better still." if best.k == max(ks) else
            " Both neighbours were tried, so the best k lies inside the grid.")
    return {"run": ex.describe() + ", plain runs interleaved",
            "table": ", ".join(f"k={p.k}: {p.speedup:.2f}×" for p in pts), "best_k": str(best.k),
            "best": _f(best.speedup), "best_x": float(best.speedup), "best_k_x": float(best.k), "edge": edge}


def vllm_line(target, drafter, small: bool, progress=None) -> dict:
    cfg = serving.build("lookup", 4, 2, 4)
    return {"run": "built and validated a vLLM config for lookup, k=4, n from 2 to 4",
            "json": serving.to_json(cfg), "errors": str(len(serving.validate(cfg))), "method": cfg["method"]}


# Guesses asked both in the interview and on the walkthrough. A guess about a run names no settings: guess_for
# adds the description of the plan that is run (the Question's or Stop's `plan`).
GUESS_COPY_SPEEDUP = Guess("lookup's speedup over plain decoding on the copy-heavy prompt (×)", "lookup_copy_speedup_x",
                           lo=0.0, hi=10.0, step=0.1, rel=0.25)
GUESS_PAIRED = Guess("will specviz pair a drafter that has its own tokenizer?", "verdict",
                     choices=("accepted", "refused"))
GUESS_SERIAL = Guess("a model drafter's draft time per step at k = 4 ÷ at k = 1", "ratio_x", lo=0.0, hi=10.0,
                     step=0.5, rel=0.25)
GUESS_CHAT_ACC = Guess("lookup's draft acceptance α̂ on chat, sampled (0 to 1)", "acc_s_x", lo=0.0, hi=1.0,
                       step=0.05, rel=0.0, abs_tol=0.1)
GUESS_KV_KB = Guess("KV cache per token of this 135M target, in KB", "kv_kb_x", lo=0.0, hi=1000.0, step=1.0, rel=0.25)
GUESS_TAU_LOST = Guess("tokens per pass τ the heads lose on a fine-tune of their target (base τ − fine-tuned τ)",
                       "tau_lost_x", lo=-2.0, hi=5.0, step=0.05, rel=0.3, abs_tol=0.1)
GUESS_TRANSLATION = Guess("lookup's speedup on the translation (×)", "speedup_x", lo=0.0, hi=10.0, step=0.1, rel=0.2)
GUESS_BEST_K = Guess("the best k for lookup here (a draft length, 1 to 16)", "best_k_x", lo=1.0, hi=16.0, step=1.0,
                     rel=0.3, abs_tol=1.0)

# the plan of each measurement that runs the model (measure function -> plan(small, with_drafter))
PLANS = {lookup_vs_draft: plan_lookup_vs_draft, heads_on_finetune: plan_heads_on_finetune,
         serial_drafting: plan_serial, lookup_on_chat: plan_chat, lookup_on_translation: plan_translation,
         lookup_sweep: plan_sweep}


def guess_for(item, small: bool, with_drafter: bool) -> Guess | None:
    """The guess of a Question or Stop as asked: naming the experiment its measurement will run."""
    plan = PLANS.get(item.measure)
    if item.guess is None or plan is None:
        return item.guess
    return replace(item.guess, experiment=plan(small, with_drafter).describe())


# -- questions and stops ------------------------------------------------------------------------
@dataclass
class Question:
    key: str
    text: str
    measure: object                     # one of the functions above
    answers: dict[str, str]             # level -> template over the measured dict
    wrong: list[tuple[str, str]] = field(default_factory=list)  # (wrong answer, why it is wrong)
    follow_up: str = ""                 # a second question the interviewer asks next, answered from the same run
    guess: Guess | None = None          # what the candidate commits to before the measurement


QUESTIONS = [
    Question("lookup_vs_draft", "When does prompt lookup beat a draft model?", lookup_vs_draft, {
        "junior": "When the answer copies the prompt. Measured just now: lookup ran {lookup_copy_speedup}× plain "
                  "on the copy-heavy prompt and {lookup_novel_speedup}× on the novel one.",
        "middle": "Lookup costs nothing to draft but only guesses right when the continuation is already in the "
                  "context: τ = {lookup_copy_tpp} on the copy prompt vs {lookup_novel_tpp} on the novel one.",
        "senior": "Lookup drafts for free (c ≈ 0) but only where the context contains the continuation: "
                  "τ = {lookup_copy_tpp} on the copy prompt vs {lookup_novel_tpp} on the novel one. The draft "
                  "model pays c per token on every prompt (draft: {draft_copy_speedup}× copy, "
                  "{draft_novel_speedup}× novel), so lookup wins wherever copying is common.",
        "principal": "Decide per traffic pool from measured τ and c, not per technique: lookup costs no memory "
                     "and no artifact, so enable it on retrieval/editing pools (here {lookup_copy_speedup}×) and "
                     "keep it off, or behind a cheap hit-rate check, on open chat ({lookup_novel_speedup}×). A "
                     "draft model ({draft_novel_speedup}× on novel text here) earns its memory and versioning "
                     "cost only where text is genuinely new."},
        [("A draft model always beats lookup.", "On copy-heavy prompts lookup's τ is as high and its draft cost "
          "is zero; measured above."),
         ("Lookup needs GPU memory for its weights.", "It has no weights: drafting is a search over token ids.")],
        guess=GUESS_COPY_SPEEDUP),
    Question("tokenizer", "Why can't any small model draft for any target?", tokenizer_check, {
        "junior": "They must use the same tokenizer. The target has {target_vocab} token ids, the other "
                  "drafter {drafter_vocab}; specviz refused the pair.",
        "middle": "p and q must be distributions over the same token ids; a different tokenizer numbers its "
                  "tokens differently ({target_vocab} vs {drafter_vocab} ids here), so specviz refuses the pair.",
        "senior": "The acceptance test compares p(x) and q(x) for one token id. The same sentence is "
                  "{target_ids} for the target and {drafter_ids} for the drafter, so the ids name different "
                  "text. specviz's refusal: “{refusal}”",
        "principal": "A shared vocabulary is necessary for the plain rule, and not sufficient: the drafter must "
                     "also be trained on the target's distribution, or it proposes plausible but rejected tokens. "
                     "Cross-vocabulary drafting changes the rule's inputs: vLLM's use_heterogeneous_vocab "
                     "intersects the two vocabularies once at start-up and drafts greedily from the shared "
                     "tokens (draft_model only); transformers' universal assisted generation re-tokenises the "
                     "text every step, paying latency and acceptance at token boundaries ({target_vocab} vs "
                     "{drafter_vocab} ids here)."},
        [("Any smaller model of the same family works.", "Families change tokenizers between releases; check the "
          "vocabulary, as specviz does.")],
        guess=GUESS_PAIRED),
    Question("heads_cost", "What do trained heads cost you operationally that lookup does not?", heads_on_finetune, {
        "junior": "Heads are weights ({heads_mb}) that must be trained for one checkpoint; lookup has none. "
                  "Measured: {head} τ {tau_base} on the base target, {tau_tuned} on its fine-tune.",
        "middle": "Heads read the target's hidden states, so they are trained for one checkpoint; they cost "
                  "{heads_mb} here, small for a 135M target but about 0.24B parameters for an EAGLE head on a 7B "
                  "one, plus EAGLE's own KV cache.",
        "senior": "Heads are fitted to one checkpoint's hidden states: every new release or fine-tune of the "
                  "{target_mb} MB target invalidates them until retrained and re-validated. Measured just now: "
                  "{head} τ {tau_base} → {tau_tuned} on a LoRA fine-tune, {tau_lost} tokens per pass lost "
                  "({share_lost} of its gain over plain). Lookup survives the swap untouched and adds no memory.",
        "principal": "An artifact per checkpoint in the release pipeline: training data, a training job, an "
                     "acceptance gate, versioned deployment ({heads_mb}; a separate drafter: {drafter_mb} MB plus "
                     "its own KV cache). Budget it against the {kv_kb} KB per token of target cache the memory "
                     "could have held instead."},
        [("Heads work on any checkpoint without training.", "They are fitted to one model's hidden states; the "
          "Tokenizers & checkpoints page measures them on a fine-tune.")],
        guess=GUESS_TAU_LOST),
    Question("serial", "Why are draft steps serial, and what does that cap?", serial_drafting, {
        "junior": "Each drafted token needs the previous one, so k tokens are k passes: the draft time per step "
                  "was {d1_ms} ms at k=1, {d2_ms} ms at k=2, {d4_ms} ms at k=4.",
        "middle": "Each drafted token is the drafter's input for the next, so the k passes cannot overlap: "
                  "{d1_ms} → {d2_ms} → {d4_ms} ms at k = 1, 2, 4.",
        "senior": "Drafting sits on the critical path before verification: with c = {c} (one drafted token ÷ one "
                  "target step of {t1_ms} ms) a step costs v(k) + k·c target steps.",
        "principal": "With a drafter a tenth of the target's cost and every token accepted, k=5 gives at best "
                     "6 ÷ (v(5) + 0.5) = {cap_tenth}× (v(5) = {v5} measured). Any real acceptance is lower, so "
                     "cutting c (fewer layers, smaller vocabulary head) or drafting in parallel (heads) is what "
                     "moves the cap."},
        [("A drafter a tenth the size makes speculation ~10× faster.", "Its k passes add k·c to every step; the cap "
          "is measured above.")],
        guess=GUESS_SERIAL),
    Question("lookup_chat", "What acceptance would lookup get on open-ended chat?", lookup_on_chat, {
        "junior": "Low: there is little to copy. Measured (sampled): draft acceptance α̂ {acc_s}, {drafted_s} tokens "
                  "drafted in {passes_s} passes, {speedup_s}× plain.",
        "middle": "Low draft acceptance α̂ ({acc_s} sampled), but a miss costs little: lookup drafts nothing or one "
                  "slightly wider pass, {speedup_s}× plain measured.",
        "senior": "Sampled, τ = {tpp_s} ({speedup_s}×): a miss costs a slightly larger verify pass, bad but not "
                  "catastrophic. Tokens per pass were {greedy_verdict}; {rep_g} of the greedy output's 4-grams "
                  "repeat. A small model's greedy output tends to loop, and a loop is what lookup copies.",
        "principal": "Measure per pool before enabling: draft acceptance α̂ {acc_s} sampled vs {acc_g} greedy on the "
                     "same prompt shows how decoding settings and model size change the answer. Gate lookup on a "
                     "running hit rate, and keep k small where matches are rare."},
        [("Lookup hurts a lot when it misses.", "A miss drafts nothing or costs one slightly wider pass "
          "({speedup_s}× measured).")],
        follow_up="And with greedy decoding on this small model? Tokens per pass were {greedy_verdict}; "
                  "draft acceptance α̂ {acc_g} greedy vs {acc_s} sampled. A small model's greedy output loops, and "
                  "lookup copies the loop, so 'near zero' holds for genuinely new text, not for a looping output.",
        guess=GUESS_CHAT_ACC),
]


@dataclass
class Stop:
    title: str
    page: str                 # pages/<file>.py to open for more
    question: str
    measure: object
    answer: str
    guess: Guess | None = None


# Order: the rule and losslessness, then costs and break-even, then proposer families, heads and memory,
# then serving.
STOPS = [
    Stop("The rule is lossless", "pages/lossless.py", "Does the output follow p even when q is far from p?",
         lossless_toy, "p = ({p_text}), q = ({q_text}). After the draws the output is {tv_p} from p and {tv_q} "
         "from q; drafts kept {kept} (theory Σ min(p, q) = {theory}).",
         Guess("the share of drafts kept when p = (0.05, 0.10, 0.15, 0.30, 0.40) and q = (0.50, 0.25, 0.15, "
               "0.05, 0.05) (0 to 1)", "kept_x", lo=0.0, hi=1.0, step=0.05, rel=0.0, abs_tol=0.05)),
    Stop("Why speculation can help at all", "pages/breakeven.py",
         "Does one target pass over several new tokens cost about as much as a pass over one?", verify_cost,
         "v(1) = {v1}; v(4) = {v4}; v(8) = {v8}. A pass that checks 4 drafts costs {cost4}. At 70% "
         "acceptance it commits 2.77 tokens on average, so (drafting aside) about {gain4}× the tokens per unit "
         "of cost.",
         Guess("v(4): the time of a pass that verifies 4 drafts, in plain decoding steps", "v4_x", lo=0.0, hi=10.0,
               step=0.1, rel=0.15)),
    Stop("The draft length k", "pages/experiments.py",
         "Which k is best for lookup drafting k tokens per match on a copy-heavy prompt?",
         lookup_sweep, "Measured {table}; best k = {best_k} ({best}×).{edge}", GUESS_BEST_K),
    Stop("Draft steps are serial", "pages/breakeven.py", "How does a model drafter's cost grow with k?",
         serial_drafting, "Draft time per step {d1_ms} / {d2_ms} / {d4_ms} ms at k = 1 / 2 / 4 (one target step: "
         "{t1_ms} ms).",
         GUESS_SERIAL),
    Stop("Lookup on copy-heavy and novel text", "pages/compare.py",
         "Does prompt lookup help everywhere? (This run samples; the k stop before was greedy.)", lookup_vs_draft,
         "Lookup: {lookup_copy_speedup}× plain on the copy-heavy prompt (τ = {lookup_copy_tpp}), "
         "{lookup_novel_speedup}× on the novel one (τ = {lookup_novel_tpp}). The draft model, same settings: "
         "{draft_copy_times} on the copy-heavy prompt, {draft_novel_times} on the novel one.",
         GUESS_COPY_SPEEDUP),
    Stop("Open-ended chat", "pages/compare.py", "What does lookup get on a short chat prompt?", lookup_on_chat,
         "Sampled: draft acceptance α̂ {acc_s}, τ = {tpp_s}, {speedup_s}×. Tokens per pass were {greedy_verdict} "
         "({rep_g} of the greedy output's 4-grams repeat).",
         GUESS_CHAT_ACC),
    Stop("Grounded, but not copyable", "pages/step_through.py",
         "A translation is built entirely from its input. Does lookup help there?", lookup_on_translation,
         "Lookup ran {speedup}× plain (τ = {tpp}, draft acceptance α̂ {acc}): the output means the same as the input "
         "but shares few token runs with it, so there is little to copy — as Spec-Bench reports for translation.",
         GUESS_TRANSLATION),
    Stop("Tokenizers", "pages/pitfalls.py", "Can a drafter with its own tokenizer be used?", tokenizer_check,
         "Refused: {target_vocab} vs {drafter_vocab} token ids; the same text is {target_ids} vs {drafter_ids}. "
         "(Cross-vocabulary methods change the rule's inputs: vLLM restricts the drafter to the tokens both "
         "vocabularies share, transformers re-tokenises the text every step.)",
         GUESS_PAIRED),
    Stop("Heads and memory", "pages/serving_reality.py", "What does a proposer cost in memory?", heads_cost,
         "Target {target_mb} MB, {kv_kb} KB of KV cache per token; heads: {heads_mb}; drafter: {drafter_mb} MB "
         "plus its own KV cache.",
         GUESS_KV_KB),
    Stop("Taking it to a server", "pages/serve.py", "What would I hand to vLLM for lookup?", vllm_line,
         "`--speculative-config '{json}'` ({errors} rule violations).",
         Guess("vLLM's method name for prompt lookup", "method", choices=("prompt_lookup", "ngram", "lookup"))),
]


def answer(template: str, measured: dict) -> str:
    return template.format(**measured)
