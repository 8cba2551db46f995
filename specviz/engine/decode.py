"""The one decode loop: prompt -> proposer drafts -> target verifies -> step record.

`Decoder` is a stepping session (the app drives it one step at a time); `Decoder.run()` is the
run-to-end generator, and engine/measure.run the one timed run to the end (the CLI, the bench, the
pages and the tests call it). There is no second fast path:
plain decoding is this loop with a proposer that never drafts.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field

import torch

from specviz import runtime
from specviz.core.block import BlockVerdict, verify_block
from specviz.core.errors import InputError, check_choice
from specviz.core.records import TOP_N, RunSummary, StepRecord, TopTokens, summarize
from specviz.core.sampling import SamplingConfig, logits_to_probs
from specviz.core.tree import Tree, TreeVerdict, depths, position_offsets, tree_mask, verify_tree
from specviz.core.verify import one_hot_q
from specviz.engine import llama
from specviz.engine.attention import new_cache
from specviz.engine.device import sync
from specviz.engine.models import LoadedModel
from specviz.proposers.base import Context, Draft, Plain, Proposer, empty_draft

VERIFY_MODES = ("token", "block")


class PassCount:
    """Target passes (prefills and verify passes) this process has run, every session and page together: what a
    server reports after each Step-through run (engine/runcache.stats_line) and the load test reads."""

    def __init__(self):
        self.n, self._lock = 0, threading.Lock()

    def add(self) -> None:
        with self._lock:
            self.n += 1


TARGET_PASSES = PassCount()


@dataclass
class DecodeConfig:
    k: int = 4                      # draft length (the ceiling when adaptive)
    max_new_tokens: int = 64
    sampling: SamplingConfig = SamplingConfig()
    seed: int = 0
    adaptive: bool = False          # shrink k after a rejection, grow it after full acceptance
    record: bool = True             # keep p/q top-N and the residual for the charts
    stop_at_eos: bool = True
    verify: str = "token"           # "token": token by token (core/tree.py); "block": a chain jointly (core/block.py)

    def check(self) -> None:
        check_choice("verify mode", self.verify, VERIFY_MODES)
        if self.k < 1:
            raise InputError(f"k must be >= 1, got {self.k}")
        if self.max_new_tokens < 1:
            raise InputError(f"max new tokens must be >= 1, got {self.max_new_tokens}")
        try:
            self.sampling.check()
        except ValueError as e:
            raise InputError(str(e)) from e


def adapt_k(k: int, n_drafted: int, n_accepted: int, k_max: int) -> int:
    """Adaptive draft length: +1 after a fully accepted draft, -1 after a rejection; floor 1."""
    if n_drafted == 0:
        return k
    if n_accepted == n_drafted:
        return min(k_max, k + 1)
    return max(1, k - 1)


def draft_tree(draft: Draft, k: int, vocab: int) -> Tree:
    """The proposer's draft as a tree no deeper than k (a chain when it gave no parents)."""
    q = draft.q if draft.q is not None else one_hot_q(draft.tokens, vocab)   # (n, V)
    if draft.parents is None:
        return Tree.chain(draft.tokens[:k].long(), q[:k])
    return Tree(draft.tokens.long(), list(draft.parents), q).pruned(k)


def draft_seen_in(draft: Draft, k: int) -> list[str] | None:
    """Where the proposer saw each node's token, for the nodes draft_tree() keeps (None when it did not say)."""
    if draft.seen_in is None:
        return None
    if draft.parents is None:
        return list(draft.seen_in[:k])
    return [o for o, d in zip(draft.seen_in, depths(list(draft.parents))) if d <= k]


@contextmanager
def layer_outputs(body: torch.nn.Module, layers: tuple[int, ...]) -> Iterator[dict[int, torch.Tensor]]:
    """While open, forward hooks on just `layers` of a decoder body (its .layers list) record each one's output
    (B, t, H) into the dict yielded. The hooks are removed on leaving."""
    taps: dict[int, torch.Tensor] = {}

    def hook(i):
        return lambda mod, args, out: taps.__setitem__(i, out[0] if isinstance(out, tuple) else out)
    handles = [body.layers[i].register_forward_hook(hook(i)) for i in layers]
    try:
        yield taps
    finally:
        for h in handles:
            h.remove()


def body_pass(body: torch.nn.Module, layers: tuple[int, ...] = (), **kw) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One pass of a decoder body -> (its final normed hidden states (B, t, H), the outputs of `layers`
    concatenated (B, t, n_layers*H), or None without layers: then no hook is registered at all). A Llama body
    under specviz's attention runs its modules directly (engine/llama.py: the same bits, less overhead)."""
    if llama.supported(body, kw):
        return llama.body_pass(body, layers, **kw)
    if not layers:
        return body(**kw).last_hidden_state, None
    with layer_outputs(body, layers) as taps:
        h = body(**kw).last_hidden_state                                  # (B, t, H)
    return h, torch.cat([taps[i] for i in layers], -1)                   # (B, t, n_layers*H)


def tree_pass_mask(parents: list[int], cached: int, dtype: torch.dtype) -> torch.Tensor:
    """The additive mask of a tree's verify pass over [root, nodes] after `cached` KV entries: each row sees the
    whole cache, the root and its own ancestors (0), nothing else (the dtype's lowest value). (t, cached+t)"""
    seen = torch.cat([torch.ones(len(parents) + 1, cached, dtype=torch.bool), tree_mask(parents)], 1)  # (t, L+t)
    return torch.zeros(seen.shape, dtype=dtype).masked_fill(~seen, torch.finfo(dtype).min)


def top_rows(probs: torch.Tensor, n: int = TOP_N) -> list[TopTokens]:
    """The n most likely tokens of every row, in one topk call. (r, V) -> r records."""
    v, i = torch.topk(probs, min(n, probs.shape[-1]), dim=-1)          # (r, n), (r, n)
    return [TopTokens(ids=a, probs=b) for a, b in zip(i.tolist(), v.tolist())]


@dataclass
class _Pass:
    """One step's working state, filled in order by Decoder.step's numbered helpers."""
    t_start: float
    remaining: int                       # new tokens still allowed in this run
    k_asked: int                         # the draft length in force (adaptive k moves it in step 5)
    target_cache: list[int]              # KV entries: before, after the pass, after the rollback
    drafter_cache: list[int | None]      # the proposer's own: before, after drafting, after its rollback
    draft: Draft | None = None           # 1. the proposer's output
    tree: Tree | None = None             # 1. the draft as a tree of n nodes
    k: int = 0                           # 1. the depth drafted to this step (k, capped by what is left)
    t_drafted: float = 0.0
    start: int = 0                       # 2. the target cache's length before the pass
    fed: torch.Tensor | None = None      # 2. (n+1,) the root, then every node
    logits: torch.Tensor | None = None   # 2. (n+1, V)
    hidden: torch.Tensor | None = None   # 2. (n+1, H)
    features: torch.Tensor | None = None  # 2. (n+1, n_layers*H) the tapped layers, when the proposer asks
    p: torch.Tensor | None = None        # 2. (n+1, V) the target's distribution at each row
    v: TreeVerdict | None = None         # 3. the accepted path and the next token
    block: BlockVerdict | None = None    # 3. block verification's weights and draws (verify="block")
    table_rows: int | None = None        # 1. rows of the proposer's adjacency table the draft was read from
    kept: list[int] = field(default_factory=list)     # 3. rows of the pass on the accepted path
    emitted: list[int] = field(default_factory=list)  # 4. tokens added to the output
    t_verified: float = 0.0


class Decoder:
    def __init__(self, target: LoadedModel, proposer: Proposer | None, prompt_ids: list[int] | torch.Tensor,
                 cfg: DecodeConfig, eos_token_id: int | list[int] | None = None):
        cfg.check()
        prompt = torch.as_tensor(prompt_ids, dtype=torch.long).flatten()
        if len(prompt) == 0:
            raise InputError("the prompt is empty")
        window = target.context_window
        self.proposer = proposer or Plain()
        self.feature_layers = tuple(self.proposer.feature_layers)     # () for every method but EAGLE-3
        n_layers = target.model.config.num_hidden_layers
        if any(not 0 <= i < n_layers for i in self.feature_layers):
            raise InputError(f"{self.proposer.name} reads target layers {list(self.feature_layers)}, "
                             f"but this target has layers 0-{n_layers - 1}")
        if len(prompt) + cfg.max_new_tokens + max(cfg.k, self.proposer.max_nodes) + 1 > window:
            raise InputError(f"prompt ({len(prompt)} tokens) + max new tokens ({cfg.max_new_tokens}) "
                             f"+ k exceeds the model's context window of {window} tokens")
        self.target, self.cfg = target, cfg
        self.model = target.model
        self.decoder_body = self.model.get_decoder()       # hidden states ...
        self.lm_head = self.model.get_output_embeddings()  # ... and the output layer, separately
        self.vocab = target.vocab_size
        if eos_token_id is None:
            eos_token_id = getattr(self.model.generation_config, "eos_token_id", None)
        self.eos = set(eos_token_id if isinstance(eos_token_id, list) else
                       ([] if eos_token_id is None else [eos_token_id]))
        self.prompt = prompt
        self.reset()

    # -- state ------------------------------------------------------------------------------
    def reset(self) -> None:
        self.ids = self.prompt.clone()           # (T,) committed tokens
        self.hidden: torch.Tensor | None = None  # (T-1, H) when the proposer needs it
        self.features: torch.Tensor | None = None  # (T-1, n_layers*H) when the proposer names feature_layers
        self.cache = new_cache(self.model)
        self.generator = torch.Generator().manual_seed(self.cfg.seed)
        self.k = self.cfg.k
        self.steps: list[StepRecord] = []
        self.finished = False
        self.stopped_at_eos = False
        self.prefilled = False
        self.prefill_s = 0.0
        self.wall_s = 0.0
        self.proposer.reset(self.prompt)

    @property
    def new_tokens(self) -> list[int]:
        return self.ids[len(self.prompt):].tolist()

    def _sync(self) -> None:
        sync(self.target.device)

    @torch.inference_mode()
    def _forward(self, ids: torch.Tensor, parents: list[int] | None = None, prefill: bool = False
                 ) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor | None]:
        """Target over new positions, extending its KV cache. (t,) -> logits (t, V) (None for the prefill, whose
        logits are never read), hidden (t, H), and the outputs of the proposer's feature_layers concatenated
        (t, n_layers*H), else None (no hooks then). With `parents` (a tree over ids[1:], core/tree.py), each
        position sees the cache, the root and its own ancestors, at position root + depth: a custom 4-D mask,
        which transformers uses as given. The prefill alone runs on an empty cache without a mask
        (engine/attention.py gives it the fused kernel); a verify pass there (a one-token prompt) passes its
        chain as a tree to keep its mask."""
        TARGET_PASSES.add()
        dev = self.target.device
        x = ids.view(1, -1).to(dev)                                       # (1, t)
        kw = {}
        L = self.cache.get_seq_length()
        if parents is None and not prefill and L == 0 and len(ids) > 1:
            parents = list(range(-1, len(ids) - 2))                      # a chain over ids[1:]
        if parents is not None:
            mask = tree_pass_mask(parents, L, self.model.dtype)                       # (t, L+t)
            kw = dict(attention_mask=mask[None, None].to(dev),                        # (1, 1, t, L+t)
                      position_ids=(L + position_offsets(parents))[None].to(dev))     # (1, t)
        h, f = body_pass(self.decoder_body, self.feature_layers, input_ids=x, cache=self.cache, use_cache=True,
                         **kw)                                           # (1, t, H), (1, t, n_layers*H) or None
        feats = f[0].float().cpu() if f is not None else None            # (t, n_layers*H)
        out = None if prefill else self.lm_head(h)[0].float().cpu()      # (t, V)
        return out, h[0].float().cpu(), feats                            # (t, H)

    @torch.inference_mode()
    def _keep(self, start: int, rows: list[int]) -> None:
        """Compact the target's cache: of the entries from `start` on, keep those at `rows` (sorted)."""
        fed = self.cache.get_seq_length() - start
        if rows != list(range(len(rows))):                               # a branch off the first path:
            idx = torch.tensor(rows, device=self.target.device) + start   # move the kept entries down
            for layer in self.cache.layers:
                for t in (layer.keys, layer.values):                     # (1, nkv, L, hd)
                    t[:, :, start:start + len(rows)] = t[:, :, idx]
        if fed > len(rows):
            self.cache.crop(-(fed - len(rows)))                          # drop the rest

    def prefill(self) -> None:
        """Cache the prompt except its last token; the first step feeds that token (docs/metrics.md: not a pass)."""
        runtime.follow_load()               # threads before the prompt's pass too: a prefill beside a busy process
        t0 = time.perf_counter()            # with a thread per core waits on OpenMP's spinning threads (runtime.py)
        H = self.model.config.hidden_size
        if len(self.prompt) > 1:
            _, h, f = self._forward(self.prompt[:-1], prefill=True)
            rows = min(self.proposer.prefill_rows, len(h)) if self.proposer.reads_logits else 0
            if rows:   # the LM head over the prompt's last rows only: over all of them it costs more than it gives
                with torch.inference_mode():
                    logits = self.lm_head(h[-rows:].to(self.model.dtype).to(self.target.device)).float().cpu()
                self.proposer.observe(self.prompt[:-1][-rows:], logits, -1)   # (rows,), (rows, V)
            if self.proposer.needs_hidden:
                self.hidden = h                                          # (P-1, H)
            self.features = f                                            # (P-1, n_layers*H) or None
        else:
            if self.proposer.needs_hidden:
                self.hidden = torch.zeros(0, H)
            if self.feature_layers:
                self.features = torch.zeros(0, len(self.feature_layers) * H)
        self._sync()
        self.prefill_s = time.perf_counter() - t0
        self.wall_s += self.prefill_s
        self.prefilled = True

    def context(self) -> Context:
        return Context(ids=self.ids, hidden=self.hidden, sampling=self.cfg.sampling, generator=self.generator,
                       features=self.features)

    # -- one step: six numbered helpers, each filling in the step's _Pass --------------------------
    def step(self) -> StepRecord | None:
        """One target pass, in six steps; returns its record (None once the run has finished)."""
        if self.finished:
            return None
        if not self.prefilled:
            self.prefill()
        runtime.follow_load()                                            # threads: one per core left free
        s = _Pass(t_start=time.perf_counter(), remaining=self.cfg.max_new_tokens - len(self.new_tokens),
                  k_asked=self.k, target_cache=[self.cache.get_seq_length()],
                  drafter_cache=[self.proposer.cache_length()])
        self._draft(s)     # 1. draft: the proposer guesses up to k tokens deep; a chain, or a tree of candidates
        self._verify(s)    # 2. verify: one target pass over [last committed token (the root), every node]
        self._accept(s)    # 3. accept: the lossless rule, child by child down the tree (core/tree.py)
        self._commit(s)    # 4. commit the accepted path + correction/bonus; compact the target cache to it
        self._update(s)    # 5. update: the proposer rolls back its own state; adaptive k moves
        rec = self._record(s)  # 6. record
        self.steps.append(rec)
        self.wall_s += time.perf_counter() - s.t_start                   # recording included
        if self.stopped_at_eos or len(self.new_tokens) >= self.cfg.max_new_tokens:
            self.finished = True
        return rec

    def _draft(self, s: _Pass) -> None:
        k = s.k = min(self.k, s.remaining - 1)
        s.table_rows = self.proposer.table_rows()                        # recycling: the table as drafting finds it
        s.draft = self.proposer.propose(self.context(), k) if k > 0 else empty_draft()
        s.drafter_cache.append(self.proposer.cache_length())
        s.tree = draft_tree(s.draft, k, self.vocab)                      # n nodes
        self._sync()
        s.t_drafted = time.perf_counter()

    def _verify(self, s: _Pass) -> None:
        s.start = self.cache.get_seq_length()
        s.fed = torch.cat([self.ids[-1:], s.tree.tokens])                # (n+1,)
        s.logits, s.hidden, s.features = self._forward(s.fed, None if s.tree.is_chain else s.tree.parents)
        # (n+1, V), (n+1, H), (n+1, n_layers*H) or None
        s.target_cache.append(self.cache.get_seq_length())
        s.p = logits_to_probs(s.logits, self.cfg.sampling)               # (n+1, V)
        if self.proposer.reads_logits:
            self.proposer.observe(s.fed, s.logits, len(self.steps))      # every row, accepted or not

    def _accept(self, s: _Pass) -> None:
        if self.cfg.verify == "block":
            s.v, s.block = self._accept_block(s.tree, s.p)
        else:
            s.v = verify_tree(s.tree, s.p, self.cfg.sampling.greedy, self.generator)
        s.kept = [0] + [i + 1 for i in s.v.path]                         # rows of the pass on the accepted path

    def _accept_block(self, tree: Tree, p: torch.Tensor) -> tuple[TreeVerdict, BlockVerdict]:
        """Block verification of a chain (core/block.py), told as the tree verdict the rest of the step reads:
        the kept prefix, and the first draft not kept as the one rejected."""
        if not tree.is_chain:
            raise InputError(f"block verification takes a chain of drafts; {self.proposer.name} drafted a tree "
                             "(use --verify token)")
        b = verify_block(tree.tokens, tree.q, p, self.cfg.sampling.greedy, self.generator)
        k, tau = len(tree), b.n_accepted
        tested = list(range(min(tau + 1, k)))
        v = TreeVerdict(path=list(range(tau)), next_token=b.next_token, origin=b.origin, tested=tested,
                        decisions=[i < tau for i in tested], ratios=b.weights.ratios[: len(tested)],
                        draws=b.draws[: len(tested)])
        return v, b

    def _commit(self, s: _Pass) -> None:
        emitted = (s.tree.tokens[s.v.path].tolist() + [s.v.next_token])[: s.remaining]
        for j, t in enumerate(emitted):
            if t in self.eos and self.cfg.stop_at_eos:
                emitted = emitted[: j + 1]
                self.stopped_at_eos = True
                break
        s.emitted = emitted
        self._keep(s.start, s.kept)
        self.ids = torch.cat([self.ids, torch.tensor(emitted, dtype=torch.long)])
        if self.hidden is not None:
            self.hidden = torch.cat([self.hidden, s.hidden[s.kept]])     # (T-1, H)
        if self.features is not None:
            self.features = torch.cat([self.features, s.features[s.kept]])  # (T-1, n_layers*H)
        self._sync()
        s.t_verified = time.perf_counter()

    def _update(self, s: _Pass) -> None:
        self.proposer.update(self.context(), len(s.v.path))
        s.drafter_cache.append(self.proposer.cache_length())
        s.target_cache.append(self.cache.get_seq_length())
        if self.cfg.adaptive:                                            # a chain's depth = its length
            self.k = adapt_k(self.k, max(s.tree.depths, default=0), len(s.v.path), self.cfg.k)

    def _record(self, s: _Pass) -> StepRecord:
        tree, v, logits, p, kept, emitted = s.tree, s.v, s.logits, s.p, s.kept, s.emitted
        greedy = self.cfg.sampling.greedy
        top = torch.topk(logits[kept][: len(emitted)], 2, dim=-1).values if self.vocab > 1 else None  # (e, 2)
        dc0, dc1, dc2 = s.drafter_cache
        rec = StepRecord(
            index=len(self.steps), k=s.k_asked, context_len=len(self.ids) - len(emitted),
            drafted=tree.tokens.tolist(), decisions=v.decisions, parents=tree.parents, tested=v.tested, path=v.path,
            seen_in=draft_seen_in(s.draft, s.k), held=s.draft.held,
            draws=v.draws, ratios=v.ratios, n_accepted=len(v.path), next_token=v.next_token,
            next_origin=v.origin, emitted=emitted, draft_s=s.t_drafted - s.t_start,
            verify_s=s.t_verified - s.t_drafted,
            logit_top1=top[:, 0].tolist() if top is not None else [],
            logit_gap=(top[:, 0] - top[:, 1]).tolist() if top is not None else [],
            greedy=greedy, q_deterministic=s.draft.q is None, last_token=int(s.fed[0]),
            target_cache=tuple(s.target_cache), drafter_cache=None if dc1 is None else (dc0 or 0, dc1, dc2),
            feature_layers=list(self.feature_layers) or None, verify=self.cfg.verify, block=s.block,
            table_rows=s.table_rows)
        if self.cfg.record:
            shown = logits.softmax(-1) if greedy else p                  # greedy: draw the T=1 softmax
            rec.p_top = top_rows(shown)                                  # n+1 rows
            rec.q_top = ([TopTokens(ids=[t], probs=[1.0]) for t in rec.drafted] if s.draft.q is None
                         else top_rows(tree.q))                          # n rows (one-hot: the token)
            if rec.rejected_at is not None:                              # p in force there, q of the rejected node
                rec.p_rejected, rec.q_rejected = p[kept[-1]].clone(), tree.q[v.tested[-1]].clone()
        return rec

    def run(self, around: Callable[[], AbstractContextManager] = nullcontext):
        """Run to the end, yielding each step's record. Each step runs inside a fresh `around()` (the app
        passes its turn on the shared model, so a page can redraw between steps outside the turn)."""
        while not self.finished:
            with around():
                rec = self.step()
            yield rec

    def summary(self) -> RunSummary:
        tok = self.target.tokenizer
        new = self.new_tokens
        text = tok.decode(new, skip_special_tokens=True) if tok is not None else " ".join(map(str, new))
        s = summarize(self.proposer.name, text, new, len(self.prompt), self.steps, self.wall_s,
                      self.prefill_s, self.stopped_at_eos)
        if not self.cfg.adaptive:
            s.k_at_floor = 0
        return s

