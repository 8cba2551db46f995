"""Serving reality: what a drafter costs in memory at scale, how v(k) grows with the batch, and what the
papers report next to this app's numbers; plus self-speculation by layer skipping, untrained."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch
from transformers import DynamicCache

from specviz.engine import measure

KIB, GB = 1024, 1e9


@dataclass(frozen=True)
class Arch:
    """What the KV cache per token and the weights depend on."""
    name: str
    params_b: float      # parameters, billions
    layers: int
    kv_heads: int
    head_dim: int
    bytes_per: int = 2   # bfloat16

    @property
    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.bytes_per   # K and V, every layer

    @property
    def weight_bytes(self) -> float:
        return self.params_b * 1e9 * self.bytes_per


# The worked example: a 70B target (80 layers, 8 KV heads of 128) with a 1B drafter (16 layers, 8 KV heads of 64).
TARGET_70B = Arch("70B target", 70.6, 80, 8, 128)
DRAFTER_1B = Arch("1B drafter", 1.24, 16, 8, 64)


@dataclass
class Budget:
    sequences_without: int
    sequences_with: int
    kv_per_seq_target: float   # bytes
    kv_per_seq_drafter: float
    free_without: float        # bytes left for KV cache after the weights
    free_with: float

    @property
    def lost(self) -> int:
        return self.sequences_without - self.sequences_with


def concurrent_sequences(target: Arch, drafter: Arch, memory_gb: float, context: int) -> Budget:
    """Sequences of `context` tokens that fit beside the weights, without and with the drafter."""
    mem = memory_gb * GB
    kv_t, kv_d = target.kv_bytes_per_token * context, drafter.kv_bytes_per_token * context
    free0 = mem - target.weight_bytes
    free1 = free0 - drafter.weight_bytes
    return Budget(max(0, int(free0 // kv_t)), max(0, int(free1 // (kv_t + kv_d))), kv_t, kv_d, free0, free1)


def v_by_batch(model, vocab: int, batches=(1, 4, 16), ks=(1, 4, 8), context: int = 128, repeats: int = 5,
               progress=None) -> dict[int, dict[int, float]]:
    """{batch: {k: v(k)}}: median time of one forward over k+1 new tokens per sequence ÷ over 1, with a KV
    cache of `context` tokens, at each batch size. Sizes are interleaved within each repeat."""
    dev = next(model.parameters()).device
    g = torch.Generator().manual_seed(0)
    out = {}
    for bi, b in enumerate(batches):
        ids = torch.randint(0, vocab, (b, context), generator=g).to(dev)          # (B, context)
        cache = DynamicCache(config=model.config)
        with torch.inference_mode():
            model(input_ids=ids, cache=cache, use_cache=True, logits_to_keep=1)
            times: dict[int, list[float]] = {k: [] for k in (0, *ks)}
            for _ in range(repeats + 1):                                         # the first round warms up
                for k in times:
                    x = torch.randint(0, vocab, (b, k + 1), generator=g).to(dev)  # (B, k+1)
                    _, secs = measure.timed(dev, lambda: model(input_ids=x, cache=cache, use_cache=True))
                    times[k].append(secs)
                    cache.crop(-(k + 1))
        t1 = statistics.median(times[0][1:])
        out[b] = {k: statistics.median(times[k][1:]) / t1 for k in ks}
        if progress:
            progress((bi + 1) / len(batches), f"batch {b}")
    return out


# What the papers report (each paper's own setting and hardware), for the panel beside this app's numbers.
PAPERS = [
    {"method": "Speculative decoding (Leviathan et al., 2023)", "setting": "T5-XXL 11B, T5-small drafter, TPU",
     "reported": "2–3×"},
    {"method": "Speculative sampling (Chen et al., 2023)", "setting": "Chinchilla 70B, 4B drafter, TPU",
     "reported": "2–2.5×"},
    {"method": "Medusa (Cai et al., 2024)", "setting": "Vicuna 7B–33B, heads, GPU",
     "reported": "Medusa-1 over 2.2×, Medusa-2 2.3–3.6× (sampling used 'typical acceptance', not lossless)"},
    {"method": "EAGLE (Li et al., 2024)", "setting": "LLaMA2-Chat 70B, one-layer head, GPU", "reported": "2.7–3.5×"},
]

GAP_REASONS = [
    "Target size: a 135M target's pass is so cheap that fixed costs per step (Python, sampling, the drafter's "
    "own passes) are a large share of it; a 7B–70B target on a GPU is bound by reading its weights, so verifying "
    "k tokens costs about one pass and the drafter is a tiny fraction.",
    "Drafter cost c: here a 2-layer drafter costs about a tenth of a target step or more (the output layer over "
    "49,152 tokens dominates); against a 70B target a 1B drafter costs a few percent.",
    "Training: this app's heads and drafter were trained for under an hour each on a CPU, on about 0.4M tokens of "
    "the target's own replies (models/README.md); the papers' for hours or days on GPUs and large chat corpora, so "
    "their acceptance is far higher.",
    "Batch: every number here is batch 1; the papers report latency at small batches too, and gains shrink as the "
    "batch grows (measured above).",
]


def layer_agreement(model, ids: torch.Tensor, ns=(2, 4, 8, 16, 24, 28)) -> dict[int, float]:
    """Top-1 agreement with the full model when only the first N layers run (final norm and output layer kept),
    over every position of `ids` (1, T). No training: what self-speculation by layer skipping starts from."""
    with torch.inference_mode():
        out = model(input_ids=ids, output_hidden_states=True)
        full = out.logits[0].argmax(-1)                                           # (T,)
        body = model.get_decoder()
        head = model.get_output_embeddings()
        res = {}
        for n in ns:
            if n >= model.config.num_hidden_layers:
                continue
            h = body.norm(out.hidden_states[n][0])                               # (T, H): after layer n
            res[n] = float((head(h).argmax(-1) == full).float().mean())
    return res
