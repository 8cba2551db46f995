"""Plain decoding against this machine's memory bandwidth, and where one step's time goes (issue 33 §5).

- bandwidth: the median of 5 copies of a 512 MiB tensor (bytes read + bytes written ÷ seconds), measured by
  specviz/engine/peaks.py, as the Serving reality roofline lab measures it;
- bytes per token: every weight read once (the tied output layer reads the embedding matrix) plus the KV cache;
- plain's share = (bytes per token ÷ bandwidth) ÷ the measured plain step: 1.0 would be the memory's limit;
- a torch.profiler table of plain steps (operators by self CPU time); --profile PATH appends it as a markdown section.

    python scripts/plain_roofline.py --dtype float32 --steps 32 --profile docs/profile_plain_step.md
"""
from __future__ import annotations

import argparse
import time

import torch

from specviz.core.roofline import share_of_limit
from specviz.core.stats import median
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import encode_prompt
from specviz.engine.models import load_model
from specviz.engine.packed import PackedLinear
from specviz.engine.peaks import bandwidth, bytes_per_token


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--profile", default=None, help="write the profiler table (markdown) here")
    ap.add_argument("--unpacked", action="store_true",
                    help="linear layers on F.linear, as before engine/packed.py (the comparison)")
    a = ap.parse_args()
    bw = bandwidth(torch.device("cpu"), 512, 5)
    target = load_model("default", "cpu", a.dtype)
    if a.unpacked:
        for mod in target.model.modules():
            if type(mod) is PackedLinear:
                mod.__class__ = torch.nn.Linear
    m = machine(target.device, target.dtype)
    w = workloads.get("summarise-passage")
    ids = encode_prompt(target.tokenizer, w.prompt, w.chat)
    d = Decoder(target, None, ids, DecodeConfig(k=1, max_new_tokens=a.steps + 8, record=False, stop_at_eos=False))
    d.prefill()
    for _ in range(3):
        d.step()                                                         # warm-up
    times = [d.step().verify_s for _ in range(a.steps // 2)]
    step = median(times)
    ctx = len(ids) + a.steps
    per_token = bytes_per_token(target, ctx)                             # weights + the float64 KV cache
    limit = bw / per_token
    which = ", linears unpacked" if a.unpacked else ""
    print(f"machine: {describe_machine(m)}{which}; load average {open('/proc/loadavg').read().split()[0]}")
    print(f"bandwidth (512 MiB copy, median of 5): {bw / 1e9:.1f} GB/s")
    print(f"bytes per token: {per_token / 2**20:.0f} MiB (weights {target.param_bytes() / 2**20:.0f} MiB + KV of "
          f"{ctx} tokens) -> limit {limit:.1f} tok/s")
    print(f"plain step (median of {len(times)}): {step * 1e3:.1f} ms = {1 / step:.1f} tok/s = "
          f"{share_of_limit(1 / step, bw, per_token):.2f} of the limit")
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(a.steps // 2):
            d.step()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)
    print(table)
    if a.profile:   # a new section at the end of the file (the file and its title when there is none yet)
        import os
        new = not os.path.exists(a.profile)
        with open(a.profile, "a") as f:
            if new:
                f.write("# Where a plain decoding step's time goes\n")
            flag = " --unpacked" if a.unpacked else ""
            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            f.write(f"\n## {describe_machine(m)}{which}\n\n`python scripts/plain_roofline.py --dtype {a.dtype} "
                    f"--steps {a.steps}{flag} --profile {a.profile}`, {when}; "
                    f"{describe_machine(m)}; load average {open('/proc/loadavg').read().split()[0]} on "
                    f"{os.cpu_count()} cores (other work shares the machine); {torch.get_num_threads()} torch threads "
                    f"at the end.\n\n"
                    f"Bandwidth {bw / 1e9:.1f} GB/s (512 MiB copy); {per_token / 2**20:.0f} MiB per token; limit "
                    f"{limit:.1f} tok/s; plain step {step * 1e3:.1f} ms ({1 / step:.1f} tok/s, "
                    f"{1 / step / limit:.2f} of the limit).\n\n{a.steps // 2} plain steps under torch.profiler, "
                    f"operators by self CPU time:\n\n```\n{table}\n```\n")

if __name__ == "__main__":
    main()
