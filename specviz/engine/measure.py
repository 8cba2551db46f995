"""A method against plain decoding: measured speed, and greedy equality with near-tie diagnosis.

Speed (docs/metrics.md): same prompt, same max new tokens, same decoding mode; plain and the method
run interleaved, each end to end (prefill included); the faster of `repeats` runs of each is kept.

Greedy equality is judged by specviz.core.neartie (docs/metrics.md: the first divergence, and whether it
sits on a bfloat16 near-tie).
"""
from __future__ import annotations

from dataclasses import dataclass

from specviz.engine.decode import DecodeConfig, Decoder
from specviz.core.neartie import Divergence, first_divergence
from specviz.proposers.base import Plain
from specviz.core.records import RunSummary, StepRecord


@dataclass
class PlainCheck:
    summary: RunSummary              # the method's kept run
    steps: list[StepRecord]
    plain: RunSummary                # plain decoding's kept run
    plain_steps: list[StepRecord]
    divergence: Divergence | None    # greedy only: where the outputs first differ
    compared: bool                   # False when sampling (tokens are not expected to match)

    @property
    def speedup(self) -> float:
        return self.summary.tokens_per_s / self.plain.tokens_per_s if self.plain.tokens_per_s else 0.0

    @property
    def identical(self) -> bool:
        return self.compared and self.divergence is None


def _run(target, proposer, ids, cfg, eos):
    d = Decoder(target, proposer, ids, cfg, eos)
    for _ in d.run():
        pass
    return d.summary(), d.steps


def against_plain(target, make_proposer, prompt_ids, cfg: DecodeConfig, eos_token_id=None,
                  repeats: int = 2, progress=None) -> PlainCheck:
    """Run plain and the method (make_proposer() builds a fresh proposer) interleaved, `repeats` times."""
    best: dict[str, tuple] = {}
    for r in range(repeats):
        for name, make in (("plain", Plain), ("method", make_proposer)):
            out = _run(target, make(), prompt_ids, cfg, eos_token_id)
            if name not in best or out[0].wall_s < best[name][0].wall_s:
                best[name] = out
            if progress:
                progress((2 * r + (name == "method") + 1) / (2 * repeats), f"run {r + 1}/{repeats}: {name}")
    (s, steps), (ps, psteps) = best["method"], best["plain"]
    greedy = cfg.sampling.greedy
    div = first_divergence(ps.token_ids, psteps, s.token_ids) if greedy else None
    return PlainCheck(s, steps, ps, psteps, div, compared=greedy)
