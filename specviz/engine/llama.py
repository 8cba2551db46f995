"""One pass of a Llama decoder body without transformers' per-module machinery, the same operators in the same order.

transformers' LlamaModel.forward wraps every layer, attention and norm in decorators (keyword deprecation,
output capture, the kernels hub's context variables, gradient checkpointing's __call__) and calls ~15 modules a
layer through nn.Module.__call__. None of it computes anything on an inference pass, and on a 2-core CPU it costs a
share of a 135M model's step: SmolLM2-135M in bfloat16, one-token steps after a 212-token prompt, the body alone,
alternated step by step (2026-12-08, AMD EPYC with AVX512-BF16, 2 threads): transformers 38.9 ms, this path 34.0 ms
(0.87), every hidden state equal bit for bit (docs/profile_plain_step.md). gpt-fast writes its own model for the same
reason; this file keeps transformers' modules and weights and only calls them directly:

- the norms, the rotary embedding, the mask (create_causal_mask) and the rotary product are transformers' own
  functions, called as LlamaModel.forward calls them;
- the attention is engine/attention.py's row-invariant attention, as the model's attention implementation says;
- the linear layers run their own forward (engine/packed.py's PackedLinear where packed).

It takes only what it reproduces exactly: a LlamaModel of LlamaDecoderLayers under specviz's attention, without
gradients, with a cache, and no hooks on its layers (supported()); anything else goes through transformers' forward.
Tests (tests/tiny/test_llama_path.py) compare both paths bit for bit on one-token steps, chains, tree masks, a
prefill and the feature taps.
"""
from __future__ import annotations

import torch
from transformers.masking_utils import create_causal_mask
from transformers.models.llama import modeling_llama as ML

from specviz.engine.attention import NAME, row_invariant_attention

KWARGS = {"input_ids", "cache", "use_cache", "attention_mask", "position_ids"}   # what body_pass may pass here
LABEL = "specviz-llama"   # how the decoder body runs, as the dtype cache's key names it (engine/autodtype.py)


def _layers_ok(body: torch.nn.Module) -> bool:
    """Every layer a plain LlamaDecoderLayer (attention, MLP, two norms of transformers' own classes)."""
    return all(type(layer) is ML.LlamaDecoderLayer and type(layer.self_attn) is ML.LlamaAttention
               and type(layer.mlp) is ML.LlamaMLP for layer in body.layers) and \
        len(body.layers) == body.config.num_hidden_layers


def supported(body: torch.nn.Module, kw: dict) -> bool:
    """Whether this pass can run here and give transformers' bits: see the module's docstring."""
    if type(body) is not ML.LlamaModel or torch.is_grad_enabled() or kw.get("cache") is None or set(kw) - KWARGS:
        return False
    if getattr(body.config, "_attn_implementation", None) != NAME:
        return False
    ok = body.__dict__.get("_specviz_llama_ok")                          # the layers' types, checked once a body
    if ok is None:
        ok = body.__dict__["_specviz_llama_ok"] = _layers_ok(body)
    return ok and not any(layer._forward_hooks or layer._forward_pre_hooks for layer in body.layers)


def body_pass(body: torch.nn.Module, layers: tuple[int, ...], input_ids: torch.Tensor, cache,
              attention_mask: torch.Tensor | None = None, position_ids: torch.Tensor | None = None,
              use_cache: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
    """LlamaModel.forward's pass, step for step: (B, t) ids -> (final normed hidden states (B, t, H), the outputs
    of `layers` concatenated (B, t, n_layers*H) or None), the cache extended."""
    x = body.embed_tokens.forward(input_ids)                             # (B, t, H)
    B, t = input_ids.shape
    if position_ids is None:
        position_ids = (torch.arange(t, device=x.device) + cache.get_seq_length()).unsqueeze(0)   # (1, t)
    mask = create_causal_mask(config=body.config, inputs_embeds=x, attention_mask=attention_mask, cache=cache,
                              position_ids=position_ids)                # None, bool or the caller's float mask
    cos, sin = body.rotary_emb.forward(x, position_ids)                  # (1, t, d) each
    taps = {}
    for i, layer in enumerate(body.layers):
        a, m = layer.self_attn, layer.mlp
        shape = (B, t, -1, a.head_dim)
        h = layer.input_layernorm.forward(x)                             # (B, t, H)
        q = a.q_proj.forward(h).view(shape).transpose(1, 2)              # (B, nh, t, d)
        k = a.k_proj.forward(h).view(shape).transpose(1, 2)              # (B, nkv, t, d)
        v = a.v_proj.forward(h).view(shape).transpose(1, 2)              # (B, nkv, t, d)
        q, k = ML.apply_rotary_pos_emb(q, k, cos, sin)
        k, v = cache.update(k, v, a.layer_idx)                           # (B, nkv, L+t, d)
        o, _ = row_invariant_attention(a, q, k, v, mask, a.scaling)      # (B, t, nh, d)
        x = x + a.o_proj.forward(o.reshape(B, t, -1).contiguous())       # (B, t, H)
        h = layer.post_attention_layernorm.forward(x)
        x = x + m.down_proj.forward(m.act_fn(m.gate_proj.forward(h)) * m.up_proj.forward(h))   # (B, t, H)
        if i in layers:
            taps[i] = x
    h = body.norm.forward(x)                                             # (B, t, H)
    return h, (torch.cat([taps[i] for i in layers], -1) if layers else None)   # (B, t, n_layers*H)
