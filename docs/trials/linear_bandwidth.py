"""The 211 linear layers of one SmolLM2-135M step at one row, alone, against what one large matrix-vector product
reads (docs/profile_plain_step.md, the AVX512-BF16 EPYC section). Random weights of the model's shapes; no model.

    .venv/bin/python docs/trials/linear_bandwidth.py
"""
import time

import torch
import torch.nn.functional as F

SHAPES = [(576, 576), (192, 576), (192, 576), (576, 576), (1536, 576), (1536, 576), (576, 1536)] * 30 + [(49152, 576)]


def median_s(f, reps: int = 20) -> float:
    for _ in range(3):
        f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]


def layers(dtype: torch.dtype, packed: bool) -> tuple[float, float]:
    """(seconds, GB/s of weights read) for all 211 layers at one row."""
    ws = [torch.randn(o, i, dtype=dtype) * 0.02 for o, i in SHAPES]                  # (out, in) each
    ps = [torch.ops.mkldnn._reorder_linear_weight(w, 1) for w in ws] if packed else None
    xs = {i: torch.randn(1, i, dtype=dtype) for i in (576, 1536)}                   # (1, in)

    def run():
        for j, w in enumerate(ws):
            x = xs[w.shape[1]]
            if packed:
                torch.ops.mkldnn._linear_pointwise(x, ps[j], None, "none", [], "")
            else:
                F.linear(x, w)
    s = median_s(run)
    return s, sum(w.numel() * w.element_size() for w in ws) / s / 1e9


def one_big() -> float:
    """GB/s read by one packed bfloat16 matrix-vector product over a 256 MiB weight."""
    w = torch.randn(2**15, 4096, dtype=torch.bfloat16)                               # (32768, 4096)
    p = torch.ops.mkldnn._reorder_linear_weight(w, 1)
    x = torch.randn(1, 4096, dtype=torch.bfloat16)                                   # (1, 4096)
    return w.numel() * 2 / median_s(lambda: torch.ops.mkldnn._linear_pointwise(x, p, None, "none", [], ""), 7) / 1e9


def read_bw() -> float:
    """GB/s read by summing a 512 MiB float32 tensor."""
    a = torch.randn(2**27)                                                           # (n,) 512 MiB
    return a.numel() * 4 / median_s(lambda: a.sum(), 7) / 1e9


if __name__ == "__main__":
    with torch.inference_mode():
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for packed in (False, True):
                s, gb = layers(torch.bfloat16, packed)
                print(f"{threads} thread(s), bfloat16, {'packed' if packed else 'F.linear'}: 211 layers at one row "
                      f"{s * 1e3:.1f} ms = {gb:.1f} GB/s", flush=True)
            print(f"{threads} thread(s): one 256 MiB packed bfloat16 matrix-vector product {one_big():.1f} GB/s; "
                  f"a 512 MiB sum {read_bw():.1f} GB/s", flush=True)
