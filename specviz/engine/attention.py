"""Attention whose every row comes out the same however many rows share the pass.

A verify pass feeds the target n+1 tokens at once; plain decoding feeds one. For greedy speculation to write
plain decoding's own text, row i of the verify pass must equal the one-token step at that position, bit for
bit. In float32 the two differ only in the last bits; in bfloat16 they differ by whole rounding steps, and at
a near-tie that flips the argmax (core/neartie.py). Measured on this CPU (torch 2.13, bfloat16, 2 threads):
the linear layers already give the same row whatever the number of rows, but PyTorch's fused CPU attention
(`sdpa`) does not, so every row of a 12-token verify pass differed from the one-token steps. (On an AVX512-BF16
CPU without AMX a linear layer did not either, for a lone row only: engine/packed.py runs one row as two.)

Here attention is two matrix products around a softmax, as in transformers' `eager` attention, all in float64:
the query heads of one key/value head are stacked instead of copying the keys (`repeat_kv`); the scores, the
softmax and the sum over keys run in float64, because a float32 or bfloat16 sum groups its terms by their
number and place (a chain's row sits among more keys, a tree's masked siblings shift them), and in float64
every grouping rounds back to the same bfloat16 value. Masked keys get exactly zero weight, so a row of a tree
pass (a custom 4-D mask, engine/decode.py) also equals the one-token step along its own path. One query needs
no mask at all.

Two things keep it about as fast as `sdpa` with transformers' DynamicCache (scripts/attention_check.py):
- RowCache stores keys and values in float64 (bfloat16 values fit exactly) in a buffer that doubles when full,
  so a step converts nothing and copies only its own new entries (DynamicCache concatenates the whole cache
  on every step);
- a prompt on an empty cache (the prefill: no mask, as many queries as keys) runs PyTorch's fused kernel.
  Every run of a prompt shares its prefill, so row invariance is not needed there; the decoder keeps a
  verify pass that meets an empty cache (a one-token prompt) off this path by giving it a mask.

The idea is that of batch-invariant kernels (Thinking Machines Lab, "Defeating Nondeterminism in LLM
Inference", 2025), applied to the one operator that needed it on this machine.
"""
from __future__ import annotations

import torch
from transformers import AttentionInterface, DynamicCache
from transformers.cache_utils import DynamicLayer
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

NAME = "specviz_rows"
COMPUTE_ATTR = "specviz_compute"   # on each attention module: the dtype its scores, softmax and sum run in


def row_invariant_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                            attention_mask: torch.Tensor | None, scaling: float, dropout: float = 0.0,
                            **kwargs) -> tuple[torch.Tensor, None]:
    """query (b, H, t, d), key/value (b, Hkv, L, d) -> output (b, t, H, d), in the query's dtype. The mask is
    sdpa_mask's: None (one query, or a causal prompt with an empty cache), boolean (True = attend), or an
    additive float mask given by the caller (tree passes). Keys and values may come in float64 (RowCache)."""
    b, H, t, d = query.shape
    hkv, L = key.shape[1], key.shape[2]
    if attention_mask is None and t == L > 1:      # a prompt on an empty cache: every run shares it, use the fast one
        return sdpa_attention_forward(module, query, key.to(query.dtype), value.to(query.dtype), None,
                                      dropout=dropout, scaling=scaling, **kwargs)
    g = H // hkv
    c = getattr(module, COMPUTE_ATTR, torch.float64)                      # float64 unless use_row_invariant said
    q = query.reshape(b, hkv, g * t, d).to(c)                             # (b, Hkv, g*t, d): one kv head's queries
    s = torch.matmul(q, key.to(c).transpose(2, 3)).view(b, hkv, g, t, L).mul_(scaling)   # (b, Hkv, g, t, L)
    low = torch.finfo(s.dtype).min          # not -inf: a row with every key masked (left padding) stays finite
    if attention_mask is None:
        if t > 1:                                                          # a causal chunk after cached keys
            causal = torch.ones(t, L, dtype=torch.bool, device=s.device).tril(L - t)   # (t, L)
            s = s.masked_fill_(~causal, low)
    elif attention_mask.dtype == torch.bool:
        s = s.masked_fill_(~attention_mask[:, :, None, :, -L:], low)         # (b, 1, 1, t, L)
    else:
        s = s.add_(attention_mask[:, :, None, :, -L:])
    w = torch.softmax(s, dim=-1).view(b, hkv, g * t, L)                    # (b, Hkv, g*t, L) masked: 0
    out = torch.matmul(w, value.to(c)).to(query.dtype).view(b, H, t, d)     # (b, H, t, d)
    return out.transpose(1, 2).contiguous(), None                          # (b, t, H, d)


AttentionInterface.register(NAME, row_invariant_attention)
ALL_MASK_ATTENTION_FUNCTIONS.register(NAME, sdpa_mask)


class Float64Layer(DynamicLayer):
    """A cache layer that keeps keys and values in float64 (bfloat16 values fit exactly), so the attention above
    converts nothing per step, in a buffer that doubles when full instead of being copied on every update;
    `keys`/`values` are views of its first L positions (crop and the decoder's compaction work on them)."""

    compute = torch.float64      # the dtype kept: the attention's compute dtype (RowCache sets it per model)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs
               ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
            self._k = self._v = None
        L, t = self.keys.shape[-2] if self.keys.dim() == 4 else 0, key_states.shape[-2]
        if (self._k is None or L + t > self._k.shape[-2] or self.keys.data_ptr() != self._k.data_ptr()
                or (self._k.is_inference() and not torch.is_inference_mode_enabled())):   # cannot write it there
            b, h, _, d = key_states.shape
            c = self.compute
            self._k = key_states.new_empty((b, h, max(256, 2 * (L + t)), d), dtype=c)   # (b, h, cap, d)
            self._v = value_states.new_empty((b, h, self._k.shape[2], value_states.shape[-1]), dtype=c)
            if L:                              # a cache that was replaced, outgrew its buffer, or left inference mode
                self._k[:, :, :L] = self.keys
                self._v[:, :, :L] = self.values
        self._k[:, :, L:L + t] = key_states
        self._v[:, :, L:L + t] = value_states
        self.keys, self.values = self._k[:, :, :L + t], self._v[:, :, :L + t]     # (b, h, L+t, d) views
        return self.keys, self.values


class RowCache(DynamicCache):
    """transformers' DynamicCache with Float64Layer for every full-attention layer (others stay as they were)."""

    def __init__(self, config, compute: torch.dtype = torch.float64) -> None:
        super().__init__(config=config)
        self.layers = [Float64Layer() if type(layer) is DynamicLayer else layer for layer in self.layers]
        for layer in self.layers:
            if isinstance(layer, Float64Layer):
                layer.compute = compute


def new_cache(model: torch.nn.Module) -> DynamicCache:
    """An empty KV cache for `model`: a RowCache under this attention, else transformers' DynamicCache."""
    if getattr(model.config, "_attn_implementation", None) == NAME:
        return RowCache(model.config, getattr(model, COMPUTE_ATTR, torch.float64))
    return DynamicCache(config=model.config)


def use_row_invariant(model: torch.nn.Module, compute: torch.dtype | None = None) -> bool:
    """Switch a loaded transformers model to this attention, computing in `compute` (default float64); False
    (and left as it was) when the model's code does not take a registered attention function."""
    try:
        model.set_attn_implementation(NAME)
    except (ValueError, AttributeError, NotImplementedError):
        return False
    c = compute or torch.float64
    setattr(model, COMPUTE_ATTR, c)
    for m in model.modules():
        if hasattr(m, "is_causal") and hasattr(m, "config"):                   # the attention modules
            setattr(m, COMPUTE_ATTR, c)
    return True
