"""PyTorch's fused attention (sdpa) against specviz's row-invariant attention (engine/attention.py), bfloat16.

    .venv/bin/python scripts/attention_check.py [--kind copy-heavy|novel] [--new 128] [--repeats 2]

Per workload, interleaved in each repeat: plain decoding's tokens/s under each attention, and whether lookup's
chains and suffix's trees write plain decoding's text (or where they part from it), with their τ and speedup
over plain under the same attention. Greedy. Read ratios, not absolute figures: the machine's other users
add noise.
"""
import argparse
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from specviz.core.neartie import first_difference  # noqa: E402
from specviz.core.sampling import SamplingConfig  # noqa: E402
from specviz.engine import workloads  # noqa: E402
from specviz.engine.attention import NAME  # noqa: E402
from specviz.engine.decode import DecodeConfig  # noqa: E402
from specviz.engine.measure import run  # noqa: E402
from specviz.engine.methods import encode_prompt, make_proposer  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--kind", default=workloads.COPY, choices=[workloads.COPY, workloads.NOVEL])
    a.add_argument("--new", type=int, default=128)
    a.add_argument("--repeats", type=int, default=2)
    a.add_argument("--threads", type=int, default=2)
    a = a.parse_args()
    torch.set_num_threads(a.threads)
    t = load_model("default", device="cpu", dtype="bfloat16")
    eos = t.tokenizer.eos_token_id
    plain_ratio = []
    for w in workloads.of_kind(a.kind):
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
        out: dict = {}
        for _ in range(a.repeats):
            for impl in ("sdpa", NAME):
                t.model.set_attn_implementation(impl)
                for method in ("plain", "lookup", "suffix"):
                    cfg = DecodeConfig(k=1 if method == "plain" else 24, max_new_tokens=a.new, record=False,
                                       sampling=SamplingConfig(0))
                    s, _ = run(t, None if method == "plain" else make_proposer(method, t), ids, cfg, eos)
                    out.setdefault((impl, method), []).append((len(s.token_ids) / s.wall_s, s.tokens_per_pass,
                                                               s.token_ids))
        plain_ratio.append(statistics.median(x[0] / y[0] for x, y in zip(out[(NAME, "plain")], out[("sdpa", "plain")])))
        for impl in ("sdpa", NAME):
            pl = out[(impl, "plain")]
            line = f"{w.name:18s} {impl:12s} plain {statistics.median(x[0] for x in pl):5.1f} tok/s"
            for method in ("lookup", "suffix"):
                r = out[(impl, method)]
                speed = statistics.median(x[0] / y[0] for x, y in zip(r, pl))
                part = first_difference(r[0][2], pl[0][2])
                text = "plain's text" if part is None else f"parts at token {part}"
                line += f" | {method} τ {r[0][1]:.2f} {speed:.2f}× {text}"
            print(line, flush=True)
    print(f"\nplain decoding, {NAME} ÷ sdpa tokens/s: median {statistics.median(plain_ratio):.3f} "
          f"(per workload: {', '.join(f'{x:.3f}' for x in plain_ratio)})")


if __name__ == "__main__":
    main()
