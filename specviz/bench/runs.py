"""One timed run of one method for the bench: specviz's decode loop (through engine/measure.run, the
one measuring path) or transformers' generate() (timed by engine/measure.timed, as measure.run is).

Every run is timed the same way from the outside (prefill included, model load excluded), with
the same prompt ids, max new tokens and EOS, so tokens/s of any two runs can be divided.
specviz runs also yield the few per-run numbers the cost model needs; step records are
reduced on the spot (recorded steps carry (V,) tensors and would fill memory).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import torch

from specviz.core.block import expected_kept
from specviz.core.neartie import emitted_logit_stats
from specviz.core.records import RunSummary, rate
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure
from specviz.engine.attention import new_cache
from specviz.engine.decode import DecodeConfig
from specviz.engine.experiment import Setting
from specviz.engine.models import LoadedModel


class StepTime(NamedTuple):
    """The part of a StepRecord that costmodel.draft_cost / plain_step_time read."""
    draft_s: float
    n_drafted: int
    verify_s: float


@dataclass(frozen=True)
class Spec:
    """A method at fixed settings. engine 'specviz' runs the decode loop, 'hf' runs generate()."""
    label: str               # unique row name in every table, e.g. "lookup", "hf lookup k=10"
    engine: str              # "specviz" | "hf"
    method: str              # specviz: plain/lookup/draft/medusa/eagle; hf: plain/lookup/assisted
    k: int = 1               # draft length (ceiling when adaptive); hf lookup: prompt_lookup_num_tokens
    n: int = 3               # lookup's n-gram size
    adaptive: bool = False
    record: bool = True      # specviz: step recording (the charts' p/q top tokens and residuals)
    verify: str = "token"    # specviz chains: "token" (token by token) or "block" (core/block.py)

    @property
    def run_setting(self) -> Setting:
        """What a specviz run of this spec is given: make_proposer's defaults for the method at this k, n and
        adaptive (the bench's lookup drafts by the match rule from n tokens, at most k)."""
        return replace(Setting.resolve(self.method, self.k, self.n if self.method == "lookup" else None,
                                       adaptive=self.adaptive, verify=self.verify), k=self.k)

    @property
    def setting(self) -> str:
        """The row's settings in words: Setting.describe(short=True) of what runs (transformers': its k)."""
        if self.method == "plain":
            return ""
        if self.engine == "hf":          # prompt_lookup_num_tokens / num_assistant_tokens
            return f"k={self.k}"
        return self.run_setting.describe(short=True)


@dataclass
class Result:
    """What the bench keeps of one run: its run record, and only what the bench needs beside it.

    A specviz run keeps its record (core/records.RunSummary, from engine/measure.run): every number the bench reads
    of it (tokens, wall time, tokens/s with and without the prefill, τ, α, α̂, k̄, a_i) is the record's own, read
    through the properties below, never recomputed here. transformers' generate() shows no steps: its run has no
    record, only its output, its wall time and its target's forward passes, and its tokens/s and τ are
    records.rate of them (what it drafted is unknown: α, α̂, k̄ are None)."""
    summary: RunSummary | None = None  # specviz runs
    # transformers' runs (no summary):
    hf_ids: list[int] = field(default_factory=list)
    hf_wall_s: float = 0.0
    hf_passes: int = 0                 # the target's forward passes, prefill included (as specviz counts them)
    # specviz runs, beside the record:
    adaptive: bool = False             # k_at_floor is reported for adaptive runs only
    steps: list[StepTime] = field(default_factory=list)           # per step: its times (for costmodel.draft_cost)
    top1: list[float] = field(default_factory=list)               # per emitted token (plain runs keep them)
    gap: list[float] = field(default_factory=list)
    # block verification only: drafts it kept, and drafts token-wise verification would have kept on the same
    # drafts with the same uniforms (StepRecord.block.token_wise_kept), over the steps that drafted
    block_kept: int | None = None
    token_wise_kept: int | None = None
    # ... and what each rule keeps in expectation over the uniforms on the same drafts (core/block.expected_kept)
    block_expected: float | None = None
    token_wise_expected: float | None = None

    def _of(self, name: str):
        """The record's field or property `name`; None for a transformers' run."""
        return getattr(self.summary, name) if self.summary is not None else None

    @property
    def ids(self) -> list[int]:
        return self.summary.token_ids if self.summary is not None else self.hf_ids

    @property
    def wall_s(self) -> float:
        return self.summary.wall_s if self.summary is not None else self.hf_wall_s

    @property
    def tokens(self) -> int:
        return len(self.ids)

    @property
    def passes(self) -> int:
        return self.summary.target_passes if self.summary is not None else self.hf_passes

    @property
    def tokens_per_s(self) -> float:
        return self.summary.tokens_per_s if self.summary is not None else rate(self.tokens, self.hf_wall_s)

    @property
    def tokens_per_pass(self) -> float | None:
        """τ (docs/metrics.md); None for a transformers' run whose passes were not counted."""
        if self.summary is not None:
            return self.summary.tokens_per_pass
        return rate(self.tokens, self.hf_passes) if self.hf_passes else None

    prefill_s = property(lambda self: self._of("prefill_s"))
    decode_tokens_per_s = property(lambda self: self._of("decode_tokens_per_s"))  # prefill left out
    draft_acceptance_rate = property(lambda self: self._of("draft_acceptance_rate"))   # α̂
    alpha = property(lambda self: self._of("alpha"))
    mean_k = property(lambda self: self._of("mean_k"))
    per_position = property(lambda self: self._of("per_position_acceptance") or [])     # a_i

    @property
    def k_at_floor(self) -> int | None:
        return self.summary.k_at_floor if self.summary is not None and self.adaptive else None


@dataclass
class Env:
    """The models of one pass (one dtype): target, built proposers, the drafter for hf assisted."""
    target: LoadedModel
    proposers: dict = field(default_factory=dict)  # {(method, n): Proposer}, built once, reset per run
    build: object = None                           # callable(method, n) -> Proposer
    drafter: LoadedModel | None = None

    @property
    def eos(self) -> int | None:
        tok = self.target.tokenizer
        return getattr(tok, "eos_token_id", None) if tok is not None else \
            getattr(self.target.model.generation_config, "eos_token_id", None)

    def proposer(self, method: str, n: int):
        key = (method, n if method == "lookup" else 0)
        if key not in self.proposers:
            self.proposers[key] = self.build(method, n)
        return self.proposers[key]


def run(env: Env, spec: Spec, prompt: list[int], max_new: int, sampling: SamplingConfig,
        seed: int, keep_logits: bool = False) -> Result:
    if spec.engine == "specviz":
        return run_specviz(env, spec, prompt, max_new, sampling, seed, keep_logits)
    return run_hf(env, spec, prompt, max_new, sampling, seed)


def specviz_config(spec: Spec, max_new: int, sampling: SamplingConfig, seed: int) -> DecodeConfig:
    """The DecodeConfig a specviz run of `spec` gets."""
    return DecodeConfig(k=max(1, spec.k), max_new_tokens=max_new, sampling=sampling, seed=seed,
                        adaptive=spec.adaptive, record=spec.record, stop_at_eos=True, verify=spec.verify)


def run_specviz(env: Env, spec: Spec, prompt: list[int], max_new: int, sampling: SamplingConfig,
                seed: int, keep_logits: bool = False) -> Result:
    prop = None if spec.method == "plain" else env.proposer(spec.method, spec.n)
    cfg = specviz_config(spec, max_new, sampling, seed)
    s, steps = measure.run(env.target, prop, prompt, cfg, env.eos)  # timed as every other measured run
    top1, gap = emitted_logit_stats(steps) if keep_logits else ([], [])
    blocks = [st.block for st in steps if st.block is not None and st.n_drafted]
    expected = [expected_kept(b.weights) for b in blocks]                       # (block, token-wise) per step
    return Result(
        summary=s, adaptive=spec.adaptive, steps=[StepTime(st.draft_s, st.n_drafted, st.verify_s) for st in steps],
        top1=top1, gap=gap,
        block_kept=sum(b.n_accepted for b in blocks) if spec.verify == "block" else None,
        token_wise_kept=sum(b.token_wise_kept for b in blocks) if spec.verify == "block" else None,
        block_expected=sum(e[0] for e in expected) if spec.verify == "block" else None,
        token_wise_expected=sum(e[1] for e in expected) if spec.verify == "block" else None)


@torch.inference_mode()
def run_hf(env: Env, spec: Spec, prompt: list[int], max_new: int, sampling: SamplingConfig,
           seed: int) -> Result:
    """transformers' generate(): plain, its prompt lookup, or assisted generation with the drafter."""
    m = env.target.model
    x = torch.tensor([prompt], device=env.target.device)                 # (1, P)
    kw = dict(max_new_tokens=max_new, eos_token_id=env.eos, pad_token_id=env.eos,
              attention_mask=torch.ones_like(x), cache=new_cache(m))   # the decoder's cache class too
    if sampling.greedy:
        kw.update(do_sample=False, temperature=None, top_k=None, top_p=None)
    else:  # the same distribution as specviz: temperature only unless top-k/top-p are set
        kw.update(do_sample=True, temperature=sampling.temperature, top_k=sampling.top_k or None,
                  top_p=sampling.top_p)
    if spec.method == "lookup":
        kw["prompt_lookup_num_tokens"] = spec.k
    elif spec.method == "assisted":
        if env.drafter is None:
            raise ValueError("hf assisted needs a drafter")
        kw.update(assistant_model=env.drafter.model, num_assistant_tokens=spec.k)
    elif spec.method != "plain":
        raise ValueError(f"unknown hf method {spec.method}")
    torch.manual_seed(seed)
    passes = [0]   # the target's forward passes (prefill included, as specviz counts them): its τ
    hook = m.register_forward_pre_hook(lambda *_: passes.__setitem__(0, passes[0] + 1))
    try:
        out, wall = measure.timed(env.target.device, lambda: m.generate(x, **kw))  # (1, P + new)
    finally:
        hook.remove()
    ids = out[0, len(prompt):].tolist()
    return Result(hf_ids=ids, hf_wall_s=wall, hf_passes=passes[0])

