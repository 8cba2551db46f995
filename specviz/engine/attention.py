"""Attention whose every row comes out the same however many rows share the pass.

A verify pass feeds the target n+1 tokens at once; plain decoding feeds one. For greedy speculation to write
plain decoding's own text, row i of the verify pass must equal the one-token step at that position, bit for
bit. In float32 the two differ only in the last bits; in bfloat16 they differ by whole rounding steps, and at
a near-tie that flips the argmax (core/neartie.py). Measured on this CPU (torch 2.13, bfloat16, 2 threads):
the linear layers already give the same row whatever the number of rows, but PyTorch's fused CPU attention
(`sdpa`) does not, so every row of a 12-token verify pass differed from the one-token steps.

Here attention is two matrix products around a softmax, as in transformers' `eager` attention. The query
heads of one key/value head are stacked instead of copying the keys (`repeat_kv`); the softmax and the sum
over keys run in float64, because a float32 or bfloat16 sum groups its terms by their number and place (a
chain's row sits among more keys, a tree's masked siblings shift them), and in float64 every grouping rounds
back to the same bfloat16 value. Masked keys get exactly zero weight, so a row of a tree pass (a custom 4-D
mask, engine/decode.py) also equals the one-token step along its own path. One query needs no mask at all.
A step costs about what `sdpa` costs here, and a long verify pass less (scripts/attention_check.py).

The idea is that of batch-invariant kernels (Thinking Machines Lab, "Defeating Nondeterminism in LLM
Inference", 2025), applied to the one operator that needed it on this machine.
"""
from __future__ import annotations

import torch
from transformers import AttentionInterface
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

NAME = "specviz_rows"


def row_invariant_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                            attention_mask: torch.Tensor | None, scaling: float, dropout: float = 0.0,
                            **kwargs) -> tuple[torch.Tensor, None]:
    """query (b, H, t, d), key/value (b, Hkv, L, d) -> output (b, t, H, d). The mask is sdpa_mask's: None
    (one query, or a causal prompt with an empty cache), boolean (True = attend), or an additive float mask
    given by the caller (tree passes)."""
    b, H, t, d = query.shape
    hkv, L = key.shape[1], key.shape[2]
    g = H // hkv
    q = query.reshape(b, hkv, g * t, d)                                    # (b, Hkv, g*t, d): one kv head's queries
    s = (torch.matmul(q, key.transpose(2, 3)) * scaling).view(b, hkv, g, t, L)   # (b, Hkv, g, t, L)
    low = torch.finfo(s.dtype).min          # not -inf: a row with every key masked (left padding) stays finite
    if attention_mask is None:
        if t > 1:                                                          # a causal chunk over its own keys
            causal = torch.ones(t, L, dtype=torch.bool, device=s.device).tril(L - t)   # (t, L)
            s = s.masked_fill(~causal, low)
    elif attention_mask.dtype == torch.bool:
        s = s.masked_fill(~attention_mask[:, :, None, :, -L:], low)          # (b, 1, 1, t, L)
    else:
        s = s + attention_mask[:, :, None, :, -L:]
    # Scores are per key, the same in any pass; the softmax's and the product's sums over keys are not, unless
    # they run in float64 (see above).
    w = torch.softmax(s, dim=-1, dtype=torch.float64).view(b, hkv, g * t, L)   # (b, Hkv, g*t, L) masked: 0
    out = torch.matmul(w, value.double()).to(query.dtype).view(b, H, t, d)   # (b, H, t, d)
    return out.transpose(1, 2).contiguous(), None                          # (b, t, H, d)


AttentionInterface.register(NAME, row_invariant_attention)
ALL_MASK_ATTENTION_FUNCTIONS.register(NAME, sdpa_mask)


def use_row_invariant(model: torch.nn.Module) -> bool:
    """Switch a loaded transformers model to this attention; False (and left as it was) when the model's code
    does not take a registered attention function."""
    try:
        model.set_attn_implementation(NAME)
    except (ValueError, AttributeError, NotImplementedError):
        return False
    return True
