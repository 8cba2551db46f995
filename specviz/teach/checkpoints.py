"""The checkpoint-swap lesson: the same proposers on the base target and on a fine-tune of it
(checkpoint_swap, tokens per pass on each), and one measured sentence per proposer."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

from specviz.core.sampling import SamplingConfig
from specviz.engine import methods as M
from specviz.engine.comparisons import run_one, warm_up
from specviz.engine.models import LoadedModel
from specviz.engine.workloads import Workload


def gain_lost(tau_base: float, tau_tuned: float) -> float:
    """Share of a proposer's gain in τ over plain decoding (τ − 1) lost on the fine-tune; nan without a gain."""
    return float("nan") if tau_base <= 1.0 else 1.0 - (tau_tuned - 1.0) / (tau_base - 1.0)


def swap_verdict(rows: list[dict]) -> list[str]:
    """One measured sentence per proposer of checkpoint_swap(): tokens per pass, base -> fine-tuned."""
    out = []
    for m in dict.fromkeys(r["method"] for r in rows if r["method"] != "plain"):
        a, b = (next(r for r in rows if r["method"] == m and r["target"] == t) for t in ("base", "fine-tuned"))
        d = b["tokens_per_pass"] - a["tokens_per_pass"]
        trend = "dropped" if d < -0.05 else "rose" if d > 0.05 else "held"
        lost = gain_lost(a["tokens_per_pass"], b["tokens_per_pass"])
        share = ("" if lost != lost else f", {lost:.0%} of its gain over plain lost" if lost >= 0
                 else f", its gain over plain grew by {-lost:.0%}")  # a rise is not a negative loss
        out.append(f"{m}: τ {a['tokens_per_pass']:.2f} on the base → {b['tokens_per_pass']:.2f} on the fine-tune "
                   f"({trend}{share}; draft acceptance α̂ {_pct(a['draft_acceptance_rate'])} → "
                   f"{_pct(b['draft_acceptance_rate'])})")
    return out


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.0%}"


@dataclass(frozen=True)
class SwapInputs:
    """What checkpoint_swap() can measure with the artefacts in models/ (methods.trained_available)."""
    heads: list[str]   # the trained heads shipped: each is measured on both checkpoints
    finetune: bool     # the LoRA fine-tune of the target shipped (the second checkpoint)

    @property
    def missing(self) -> list[str]:
        """What is not there yet, in words; empty when the swap can run."""
        return ([] if self.heads else ["medusa or eagle heads"]) + ([] if self.finetune else ["the fine-tuned target"])


def checkpoint_swap_inputs() -> SwapInputs:
    avail = M.trained_available()
    return SwapInputs([m for m in ("medusa", "eagle") if avail.get(m)], bool(avail.get("lora")))


def checkpoint_swap(base: LoadedModel, tuned: LoadedModel, workload: Workload, methods: list[str],
                    k: int = 4, sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 48,
                    seed: int = 0, progress=None) -> tuple[list[dict], dict[str, str]]:
    """The same proposers on the base target and on a fine-tune of it: tokens per pass side by side.

    Each proposer is loaded for the target it runs on, as a deployment that forgot to retrain would
    do. What the loader says about it — a checkpoint-mismatch warning, or a refusal (then the base's
    proposer is run on the fine-tune anyway) — is returned as {method: message}."""
    rows, notes = [], {}
    plan = [(lab, tgt, m) for lab, tgt in (("base", base), ("fine-tuned", tuned)) for m in ["plain", *methods]]
    warm_up(base, workload, sampling, seed)
    for i, (lab, tgt, m) in enumerate(plan):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                prop = M.make_proposer(m, tgt)
            except Exception as e:  # noqa: BLE001 - the loader's own refusal is part of the lesson
                notes[f"{m} on the {lab} target"] = f"refused: {e}"
                prop = M.make_proposer(m, base)
        if caught:
            notes.setdefault(f"{m} on the {lab} target", "warned: " + str(caught[0].message))
        s, _ = run_one(tgt, workload, m, k, 3 if m == "lookup" else None, sampling, max_new_tokens, seed,
                       proposer=prop)
        rows.append({"target": lab, "method": m, "tokens_per_pass": s.tokens_per_pass,
                     "draft_acceptance_rate": s.draft_acceptance_rate, "tokens_per_s": s.tokens_per_s})
        if progress:
            progress((i + 1) / len(plan), f"{i + 1}/{len(plan)} runs · {m} on the {lab} target")
    return rows, notes
