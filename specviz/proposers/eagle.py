"""An EAGLE-style head: one decoder layer that drafts at the level of the target's features.

Input at position t: the target's final hidden state f_t (which predicted token t+1) together
with the embedding of token t+1; output: a guess for f_{t+1}, turned into a token by the target's
own (frozen) LM head. Drafting feeds each guessed feature back in with the embedding of the token
it produced, one small step per drafted token. The head keeps its own KV cache over the context,
built from the target's real features; drafted entries are dropped after every step.

The EAGLE-3 variant (artifact kind "eagle3"; Li et al., arXiv 2503.01840) reads, instead of f_t, the
outputs of a low, a middle and a high target layer concatenated (n*H) and projected to H by `fuse`;
its output goes through its own RMSNorm before the frozen LM head, and later drafting steps feed the
head's own output (before that norm) in place of the fused feature, as the EAGLE authors' code does
(SafeAILab/EAGLE, eagle/model/cnets.py: `fc` maps 3H -> H without bias when the input is wider than H,
logits = lm_head(norm(out_hidden)), and the next step is fed out_hidden). Unlike theirs, the layer here
is EAGLE's (fc over [feature, embedding] -> one Llama layer), not one whose attention reads 2H. It is
trained on tokens only (no feature to regress). Same layer, same cache, same chain and tree code: the
head says which it is.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from specviz.core.errors import InputError
from specviz.core.sampling import logits_to_probs, sample
from specviz.proposers.base import Context, Draft, empty_draft
from specviz.proposers.vocab import HeadProposer, SubsetHead


def default_feature_layers(n_layers: int) -> tuple[int, ...]:
    """A low, a middle and the last decoder layer (0-based): (2, 15, 29) for SmolLM2-135M's 30. vLLM's default
    taps (2, L // 2, L - 3) at the *input* of those layers (llama.py, get_eagle3_aux_hidden_state_layers);
    here a layer's index names its output, and the issue's choice keeps the last layer."""
    return tuple(sorted({min(2, n_layers - 1), n_layers // 2, n_layers - 1}))


def check_feature_layers(layers, n_layers: int) -> tuple[int, ...]:
    """Layer indices (ints, or a comma-separated string) -> a tuple, or one clear InputError."""
    if isinstance(layers, str):
        parts = [x.strip() for x in layers.split(",") if x.strip()]
        try:
            layers = [int(x) for x in parts]
        except ValueError:
            raise InputError(f"layers must be comma-separated whole numbers, e.g. 2,15,29; got '{','.join(parts)}'") \
                from None
    layers = tuple(int(x) for x in layers)
    if not layers:
        raise InputError("give at least one target layer to read features from (e.g. 2,15,29)")
    bad = [x for x in layers if not 0 <= x < n_layers]
    if bad:
        raise InputError(f"layer {bad[0]} does not exist: this target has layers 0-{n_layers - 1}")
    if len(set(layers)) != len(layers):
        raise InputError(f"layers repeat: {','.join(map(str, layers))}")
    return layers


class RMSNorm(torch.nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rope(pos: torch.Tensor, head_dim: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=pos.device) / head_dim)
    ang = pos.float()[:, None] * inv[None]                              # (T, hd/2)
    emb = torch.cat([ang, ang], -1)                                     # (T, hd)
    return emb.cos(), emb.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, -1)
    return x * cos.to(x.dtype) + torch.cat([-x2, x1], -1) * sin.to(x.dtype)


class Layer(torch.nn.Module):
    """A Llama decoder layer (grouped-query attention + SwiGLU MLP) with an explicit KV cache."""

    def __init__(self, hidden: int, n_heads: int, n_kv: int, inter: int, eps: float, theta: float):
        super().__init__()
        self.nh, self.nkv, self.hd, self.theta = n_heads, n_kv, hidden // n_heads, theta
        self.norm1, self.norm2 = RMSNorm(hidden, eps), RMSNorm(hidden, eps)
        self.q = torch.nn.Linear(hidden, n_heads * self.hd, bias=False)
        self.k = torch.nn.Linear(hidden, n_kv * self.hd, bias=False)
        self.v = torch.nn.Linear(hidden, n_kv * self.hd, bias=False)
        self.o = torch.nn.Linear(n_heads * self.hd, hidden, bias=False)
        self.gate = torch.nn.Linear(hidden, inter, bias=False)
        self.up = torch.nn.Linear(hidden, inter, bias=False)
        self.down = torch.nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor, pos: torch.Tensor, past: tuple | None = None,
                mask: torch.Tensor | None = None):
        """x (B, T, H) at positions pos (T,); past = (K, V) each (B, nkv, L, hd); mask (T, L+T) bool,
        True = may attend (default: causal). Returns y, (K, V)."""
        B, T, _ = x.shape
        a = self.norm1(x)
        q = self.q(a).view(B, T, self.nh, self.hd).transpose(1, 2)       # (B, nh, T, hd)
        k = self.k(a).view(B, T, self.nkv, self.hd).transpose(1, 2)      # (B, nkv, T, hd)
        v = self.v(a).view(B, T, self.nkv, self.hd).transpose(1, 2)
        cos, sin = rope(pos, self.hd, self.theta)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        if past is not None:
            k, v = torch.cat([past[0], k], 2), torch.cat([past[1], v], 2)  # (B, nkv, L+T, hd)
        L = k.shape[2] - T
        rep = self.nh // self.nkv
        kk, vv = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)  # (B, nh, L+T, hd)
        if T == 1 and mask is None:
            att = F.scaled_dot_product_attention(q, kk, vv)
        else:   # causal, with the cached prefix fully visible, unless told otherwise (a tree)
            if mask is None:
                mask = torch.ones(T, L + T, dtype=torch.bool, device=x.device).tril(L)  # (T, L+T)
            att = F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask.to(x.device))
        x = x + self.o(att.transpose(1, 2).reshape(B, T, -1))
        m = self.norm2(x)
        return x + self.down(F.silu(self.gate(m)) * self.up(m)), (k, v)


class EagleHead(torch.nn.Module):
    """feature_layers=(): EAGLE's head over the target's final hidden state. feature_layers=(2, 15, 29): the
    EAGLE-3 head, whose real input is those layers' outputs concatenated (n*H), fused to H by `fuse`."""

    def __init__(self, hidden: int, n_heads: int, n_kv: int, inter: int, eps: float = 1e-5,
                 theta: float = 10000.0, feature_layers: tuple[int, ...] = ()):
        super().__init__()
        self.feature_layers = tuple(feature_layers)
        self.fc = torch.nn.Linear(2 * hidden, hidden)
        self.layer = Layer(hidden, n_heads, n_kv, inter, eps, theta)
        if self.feature_layers:
            self.fuse = torch.nn.Linear(len(self.feature_layers) * hidden, hidden, bias=False)
            self.norm = RMSNorm(hidden, eps)

    @classmethod
    def for_target(cls, config, feature_layers: tuple[int, ...] = ()) -> "EagleHead":
        rp = getattr(config, "rope_parameters", None) or {}
        theta = rp.get("rope_theta", getattr(config, "rope_theta", 10000.0))
        layers = check_feature_layers(feature_layers, config.num_hidden_layers) if feature_layers else ()
        return cls(config.hidden_size, config.num_attention_heads, config.num_key_value_heads,
                   config.intermediate_size, config.rms_norm_eps, theta, layers)

    def identity_init(self) -> "EagleHead":
        """Start as 'the next feature equals this one' (fc passes the feature through, the layer's
        output projections are zero): like Medusa's zero-initialised blocks, a sensible first guess.
        A fused head starts from its highest layer's output alone (its norm stands in for the target's)."""
        H = self.fc.out_features
        with torch.no_grad():
            self.fc.weight.zero_()
            self.fc.bias.zero_()
            self.fc.weight[:, :H].copy_(torch.eye(H))
            self.layer.o.weight.zero_()
            self.layer.down.weight.zero_()
            if self.feature_layers:
                top = self.feature_layers.index(max(self.feature_layers))
                self.fuse.weight.zero_()
                self.fuse.weight[:, top * H:(top + 1) * H].copy_(torch.eye(H))
        return self

    def project(self, feat: torch.Tensor) -> torch.Tensor:
        """The target's real features -> the head's input width H: (..., n*H) -> (..., H) fused; else as given."""
        return self.fuse(feat) if self.feature_layers else feat

    def readout(self, y: torch.Tensor) -> torch.Tensor:
        """The head's output -> what the frozen LM head reads: through its own norm when fused; else as given."""
        return self.norm(y) if self.feature_layers else y

    def forward(self, feat: torch.Tensor, emb: torch.Tensor, pos: torch.Tensor, past: tuple | None = None,
                mask: torch.Tensor | None = None):
        """feat, emb (B, T, H) -> predicted next features (B, T, H), updated cache."""
        return self.layer(self.fc(torch.cat([feat, emb], -1)), pos, past, mask)


class Eagle(HeadProposer):
    """Drafts a chain from an EagleHead; an EAGLE-3 head (feature_layers set) reads Context.features, the
    old one Context.hidden."""
    name = "eagle"
    needs_hidden = True

    def __init__(self, head: EagleHead, embed: torch.nn.Module, out: SubsetHead, name: str = "eagle",
                 add_prompt_ids: bool = True):
        self.head, self.embed, self.name = head, embed, name
        self.feature_layers = head.feature_layers
        self.needs_hidden = not self.feature_layers
        self._init_head(head, out, add_prompt_ids)
        self.past, self.n_real, self.f_last = None, 0, None

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.past, self.n_real, self.f_last = None, 0, None
        super().reset(prompt_ids)

    def cache_length(self) -> int | None:
        """The head's own KV cache: one entry per (feature, token) pair it has been fed."""
        return self.past[0].shape[2] if self.past is not None else 0

    def update(self, ctx: Context, n_accepted: int) -> None:
        """Drop this step's drafted entries (all of them: they were computed from guessed features; the
        next step re-feeds the committed positions with the target's real ones)."""
        if self.past is not None and self.past[0].shape[2] > self.n_real:
            self.past = tuple(t[:, :, : self.n_real] for t in self.past)

    def _real(self, ctx: Context) -> torch.Tensor | None:
        """The target's real features in the context: (T-1, n*H) fused layers, or (T-1, H) final states."""
        return ctx.features if self.feature_layers else ctx.hidden

    def _logits(self, f: torch.Tensor) -> torch.Tensor:
        """The head's outputs (..., H) -> logits over the full vocabulary (..., V), -inf off the draft vocabulary."""
        return self.out(self.head.readout(f))

    def _step(self, feat: torch.Tensor, tokens: torch.Tensor, start: int | torch.Tensor,
              mask: torch.Tensor | None = None, real: bool = False) -> torch.Tensor:
        """Feed (feature, next token) pairs from position `start` (or at the positions given); returns
        the guessed next features (T, H). real=True: the target's own features (fused first, for EAGLE-3)."""
        emb = self.embed(tokens.to(self.device)).to(self.dtype)          # (T, H)
        pos = (torch.arange(start, start + len(tokens)) if isinstance(start, int) else start).to(self.device)
        x = feat[None].to(self.device, self.dtype)                       # (1, T, H) or (1, T, n*H) real, fused
        y, self.past = self.head(self.head.project(x) if real else x, emb[None], pos, self.past, mask)
        return y[0]                                                      # (T, H)

    def _catch_up(self, ctx: Context) -> int:
        """Drop last step's drafted entries from the head's cache and feed the real features since;
        self.f_last is then the guess of the feature that predicts the next token. Returns n_real."""
        T = len(ctx.ids)
        real = self._real(ctx)
        n_real = len(real)                                               # T-1 entries: (f_j, x_{j+1})
        if self.past is not None and self.past[0].shape[2] > self.n_real:  # drop last step's drafts
            self.past = tuple(t[:, :, : self.n_real] for t in self.past)
        start = self.n_real if self.past is not None else 0
        if start < n_real:                                               # catch up on real features
            self.f_last = self._step(real[start:n_real], ctx.ids[start + 1:T], start, real=True)[-1]
        self.n_real = n_real
        return n_real

    @torch.inference_mode()
    def propose(self, ctx: Context, k: int) -> Draft:
        """Catch the head up with the context, then draft; nothing to draft from (no real features, k < 1): empty."""
        real = self._real(ctx)
        if real is None or len(real) == 0 or k < 1:
            return empty_draft()
        return self._draft(ctx, k, self._catch_up(ctx))

    def _draft(self, ctx: Context, k: int, n_real: int) -> Draft:
        """A chain of k from self.f_last, each guessed feature fed back with its token; n_real: real positions."""
        f = self.f_last
        tokens, qs = [], []
        for i in range(k):
            logits = self._logits(f).float().cpu()                       # (V,)
            q = logits_to_probs(logits, ctx.sampling)
            x = int(logits.argmax()) if ctx.sampling.greedy else sample(q, ctx.generator)
            tokens.append(x)
            qs.append(q)
            if i < k - 1:
                f = self._step(f[None], torch.tensor([x]), n_real + i)[-1]
        return Draft(tokens=torch.tensor(tokens, dtype=torch.long), q=torch.stack(qs))  # q: (k, V)
