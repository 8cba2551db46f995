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

from specviz.core.neartie import emitted_logit_stats
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
    """What the bench keeps of one run."""
    ids: list[int]
    wall_s: float
    # specviz only (None / empty for hf runs):
    passes: int | None = None
    prefill_s: float | None = None
    drafted: int | None = None
    accepted: int | None = None
    tested: int | None = None          # accepted + rejections
    tokens_per_pass: float | None = None
    mean_k: float | None = None
    k_at_floor: int | None = None
    per_position: list[float] = field(default_factory=list)       # a_i (docs/metrics.md)
    steps: list[StepTime] = field(default_factory=list)           # per step: its times (for costmodel.draft_cost)
    top1: list[float] = field(default_factory=list)               # per emitted token (plain runs keep them)
    gap: list[float] = field(default_factory=list)
    # block verification only: drafts it kept, and drafts token-wise verification would have kept on the same
    # drafts with the same uniforms (StepRecord.block.token_wise_kept), over the steps that drafted
    block_kept: int | None = None
    token_wise_kept: int | None = None

    @property
    def tokens(self) -> int:
        return len(self.ids)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def decode_tokens_per_s(self) -> float | None:
        """tokens/s with the prefill left out (specviz runs only)."""
        if self.prefill_s is None or self.wall_s <= self.prefill_s:
            return None
        return self.tokens / (self.wall_s - self.prefill_s)

    @property
    def draft_acceptance_rate(self) -> float | None:
        """alpha-hat = accepted / drafted (docs/metrics.md)."""
        return self.accepted / self.drafted if self.drafted else None

    @property
    def alpha(self) -> float | None:
        """alpha = accepted / tested (docs/metrics.md)."""
        return self.accepted / self.tested if self.tested else None


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
    return Result(
        ids=s.token_ids, wall_s=s.wall_s, passes=s.target_passes, prefill_s=s.prefill_s, drafted=s.drafted,
                  accepted=s.accepted,
        tested=s.tested,        tokens_per_pass=s.tokens_per_pass, mean_k=s.mean_k,
        k_at_floor=s.k_at_floor if spec.adaptive else None, per_position=s.per_position_acceptance,
        steps=[StepTime(st.draft_s, st.n_drafted, st.verify_s) for st in steps],
        top1=top1, gap=gap,
        block_kept=sum(b.n_accepted for b in blocks) if spec.verify == "block" else None,
        token_wise_kept=sum(b.token_wise_kept for b in blocks) if spec.verify == "block" else None)


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
    return Result(ids=ids, wall_s=wall, passes=passes[0],
                  tokens_per_pass=len(ids) / passes[0] if passes[0] else None)

