"""The checkpoint-swap lesson in words: one measured sentence per proposer of
engine.experiments.checkpoint_swap (tokens per pass on the base target, then on its fine-tune)."""
from __future__ import annotations


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
                   f"({trend}{share}; acceptance {_pct(a['draft_acceptance_rate'])} → {_pct(b['draft_acceptance_rate'])})")
    return out


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.0%}"
