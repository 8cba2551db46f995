"""Which dtype `--dtype auto` runs, from pass times measured on this machine (docs/metrics.md, "Choosing the dtype").

Pure: timings in, a choice and its reason out. engine/autodtype.py measures the timings (once per machine,
cached) and hands them here; tests inject their own.

The rule. For each dtype the device offers, estimate the wall time of a reference request, a prompt of
PROMPT tokens and NEW_TOKENS new tokens:
- plain decoding:       prefill + NEW_TOKENS × t(1 row)
- speculative decoding: prefill + NEW_TOKENS ÷ TAU × mean(t(1 row), t(1 + CHAIN_K rows), t(1 + TREE_NODES rows))
  (a copying method's passes draft nothing, a short chain, or a long copy or a tree of 24 nodes: each shape
  weighted alike; TAU tokens kept per pass)
and pick the dtype with the smallest estimate for the purpose. Within TIE of the fastest, float32 wins: it
rounds less, so greedy near-ties are rarer. Where a verify pass of many rows costs nearly one step per row
(a CPU without native bfloat16 kernels), speculation stops paying, and the estimate says so.
"""
from __future__ import annotations

from dataclasses import dataclass

PROMPT = 192        # tokens of the reference prompt (the bench's copy-heavy prompts are 150-250)
NEW_TOKENS = 128    # the bench's new tokens per run
TAU = 2.5           # tokens per pass of the reference speculative run (bench: lookup 2.8, eagle-tree 2.1)
CHAIN_K = 8         # drafts of a chain pass: the trained proposers' adaptive k reaches 8
TREE_NODES = 24     # nodes of a tree pass, and lookup's and suffix's largest draft
TIE = 0.03          # within 3% of the fastest, float32 is kept
QUIET_CORES = 0.25  # a timing is settled when the rest of the machine kept at most this many cores busy meanwhile
MAX_TRIES = 3       # a timing taken under load is re-timed on later loads (when quiet) up to this many times in all
PURPOSES = ("plain", "speculative")
SHAPES = ("step", "chain", "tree", "prefill")


@dataclass(frozen=True)
class ShapeTimes:
    """Seconds, medians: one-token step; a chain pass of 1 + CHAIN_K rows; a tree pass of 1 + TREE_NODES
    rows; the prefill of PROMPT tokens."""
    step: float
    chain: float
    tree: float
    prefill: float

    def estimate(self, purpose: str) -> float:
        """Seconds for the reference request (module docstring)."""
        if purpose == "plain":
            return self.prefill + NEW_TOKENS * self.step
        if purpose == "speculative":
            return self.prefill + NEW_TOKENS / TAU * (self.step + self.chain + self.tree) / 3
        raise ValueError(f"unknown purpose '{purpose}' (use {' or '.join(PURPOSES)})")

    def v(self, shape: str) -> float:
        """A pass's cost in one-token steps (docs/metrics.md's v): v(chain) = v(CHAIN_K), v(tree) = v(TREE_NODES)."""
        return getattr(self, shape) / self.step

    def as_dict(self) -> dict:
        return {s: getattr(self, s) for s in SHAPES}

    @classmethod
    def from_dict(cls, d: dict) -> "ShapeTimes":
        return cls(**{s: float(d[s]) for s in SHAPES})


@dataclass(frozen=True)
class Choice:
    dtype: str
    reason: str                      # one line, shown by the CLI summary and the app's sidebar
    estimates: dict                  # {dtype: seconds of the reference request}
    purpose: str


def choose(times: dict[str, ShapeTimes], purpose: str = "speculative") -> Choice:
    """The dtype with the smallest estimate for `purpose`; float32 when within TIE of it. One dtype: that one."""
    if not times:
        raise ValueError("no dtype was timed")
    est = {d: t.estimate(purpose) for d, t in times.items()}
    best = min(est, key=est.get)
    if "float32" in est and est["float32"] <= est[best] * (1 + TIE):
        best = "float32"
    return Choice(dtype=best, reason=reason(times, best, est, purpose), estimates=est, purpose=purpose)


def reason(times: dict[str, ShapeTimes], best: str, est: dict, purpose: str) -> str:
    """e.g. 'bfloat16 verify of 25 rows costs 12.4× one row here (float32 2.6×): float32, est. 6.6 s against
    15.3 s for a 192-token prompt and 128 new tokens'."""
    if len(times) == 1:
        return f"{best}: the only dtype timed on this device"
    others = sorted((d for d in times if d != best), key=est.get)
    rows = 1 + TREE_NODES
    if purpose == "speculative":
        what = "; ".join(f"{d} verify of {rows} rows costs {times[d].v('tree'):.1f}× one row here" for d in others)
        what += f" ({best} {times[best].v('tree'):.1f}×)"
    else:
        what = "; ".join(f"{d} one-token step {times[d].step * 1e3:.0f} ms, prefill {times[d].prefill:.2f} s"
                         for d in others)
        what += f" ({best} {times[best].step * 1e3:.0f} ms, {times[best].prefill:.2f} s)"
    vs = ", ".join(f"{est[d]:.1f} s in {d}" for d in others)
    return (f"{what}: {best}, est. {est[best]:.1f} s against {vs} for {purpose} decoding of a {PROMPT}-token "
            f"prompt and {NEW_TOKENS} new tokens")


def settled(others_busy: float | None, tries: int) -> bool:
    """Whether a remembered timing is final: taken while the rest of the machine kept at most QUIET_CORES cores busy
    (None: not recorded, as in caches written before this rule), or already timed MAX_TRIES times. A timing taken
    under load names another process's work as this machine's cost; it is used, but timed again when quieter."""
    return others_busy is None or others_busy <= QUIET_CORES or tries >= MAX_TRIES


def conditions(others_busy: float | None, cpus: int, tries: int) -> str:
    """How busy the machine was while it was timed, for the reason line: '' when not recorded."""
    if others_busy is None:
        return ""
    words = f"other work kept {others_busy:.1f} of {cpus} cores busy"
    if settled(others_busy, tries):
        return words if others_busy <= QUIET_CORES else f"{words}; timed {tries} times, kept"
    return f"{words}: provisional, timed again on a quieter load ({tries} of {MAX_TRIES})"
