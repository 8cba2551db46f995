"""The training loop shared by every job: AdamW, warm-up + cosine, autocast, resumable.

A checkpoint is two files in the run folder: ckpt.safetensors (trainable weights and the AdamW
moments) and ckpt.json (step, wall time, losses so far). A job started again with the same run
folder picks up at the saved step; the data order is seeded by step, so it continues exactly.
"""
from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Callable

import torch
from safetensors.torch import load_file, save_file

from specviz.engine.device import autocast, half_dtype


def cli_command() -> str | None:
    """The `python -m specviz ...` line running now (a card records what made its artifact), else None."""
    argv = sys.argv
    main = os.path.join("specviz", "__main__.py")
    return "python -m specviz " + " ".join(argv[1:]) if argv and argv[0].endswith(main) else None


def set_threads(n: int | None) -> None:
    if n:
        torch.set_num_threads(n)


def lr_at(step: int, steps: int, lr: float, warmup: int) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


def save_ckpt(folder: Path, module: torch.nn.Module, opt: torch.optim.Optimizer, info: dict) -> None:
    tensors = {f"w.{k}": v.detach().contiguous() for k, v in trainable_state(module).items()}
    for i, st in enumerate(opt.state.values()):
        for name, v in st.items():
            if torch.is_tensor(v):
                tensors[f"opt.{i}.{name}"] = v.detach().contiguous()
    tmp = folder / "ckpt.tmp"
    save_file(tensors, str(tmp))
    tmp.replace(folder / "ckpt.safetensors")
    (folder / "ckpt.json").write_text(json.dumps(info, indent=1))


def trainable_state(module: torch.nn.Module) -> dict:
    names = {n for n, p in module.named_parameters() if p.requires_grad}
    return {k: v for k, v in module.state_dict().items() if k in names}


def load_ckpt(folder: Path, module: torch.nn.Module, opt: torch.optim.Optimizer) -> dict | None:
    if not (folder / "ckpt.json").exists():
        return None
    t = load_file(str(folder / "ckpt.safetensors"))                               # on the CPU
    module.load_state_dict({k[2:]: v for k, v in t.items() if k.startswith("w.")}, strict=False)
    params = [p for g in opt.param_groups for p in g["params"]]
    state = {}
    for i in range(len(params)):
        st = {k.split(".", 2)[2]: v for k, v in t.items() if k.startswith(f"opt.{i}.")}
        if st:
            state[i] = st
    # the optimiser's own loading moves each moment to its parameter's device (assigning opt.state did not)
    opt.load_state_dict({"state": state, "param_groups": opt.state_dict()["param_groups"]})
    return json.loads((folder / "ckpt.json").read_text())


def train(module: torch.nn.Module, loss_fn: Callable[[int, random.Random], torch.Tensor], folder: str | Path,
          steps: int, lr: float = 1e-3, warmup: int = 20, weight_decay: float = 0.0,
          ckpt_every: int = 50, max_minutes: float | None = None, device: torch.device | str = "cpu",
          eval_fn: Callable[[], dict] | None = None, progress: bool = True, desc: str = "train") -> dict:
    """Run `steps` optimiser steps of loss_fn(step, rng); resumes from folder. Returns the log."""
    from tqdm import tqdm

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    params = [p for p in module.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))
    info = load_ckpt(folder, module, opt) or {"step": 0, "wall_s": 0.0, "losses": []}
    dev = torch.device(device)
    amp = autocast(dev)                      # bfloat16, or float16 on a GPU without native bfloat16
    # float16's small range loses small gradients: scale the loss up (and skip steps that overflow) there
    scaler = torch.amp.GradScaler("cuda", enabled=dev.type == "cuda" and half_dtype(dev) == torch.float16)
    t0, wall0 = time.perf_counter(), info["wall_s"]
    bar = tqdm(total=steps, initial=info["step"], desc=desc, disable=not progress)
    module.train()
    while info["step"] < steps:
        step = info["step"]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr, warmup)
        with amp:
            loss = loss_fn(step, random.Random(step * 7919 + 1))
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)                 # clip the true gradients
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        scaler.step(opt)
        scaler.update()
        info["step"] = step + 1
        info["losses"].append(round(float(loss.detach()), 4))
        info["wall_s"] = wall0 + time.perf_counter() - t0
        bar.update(1)
        bar.set_postfix(loss=f"{info['losses'][-1]:.3f}")
        out_of_time = max_minutes is not None and info["wall_s"] > 60 * max_minutes
        if info["step"] % ckpt_every == 0 or info["step"] == steps or out_of_time:
            save_ckpt(folder, module, opt, info)
        if out_of_time:
            info["stopped_early"] = True
            break
    bar.close()
    module.eval()
    info["steps_done"] = info["step"]
    if eval_fn is not None:
        with torch.no_grad():
            info["eval"] = eval_fn()
    (folder / "log.json").write_text(json.dumps({k: v for k, v in info.items() if k != "losses"}, indent=1))
    return info


def split(seqs: list, heldout: float = 0.06, seed: int = 0) -> tuple[list, list]:
    idx = list(range(len(seqs)))
    random.Random(seed).shuffle(idx)
    n = max(1, int(len(seqs) * heldout))
    return [seqs[i] for i in idx[n:]], [seqs[i] for i in idx[:n]]


def pack(seqs: list, rng: random.Random, tokens: int, key: str = "ids") -> list:
    """Sequences for one step: drawn at random until about `tokens` positions."""
    out, n = [], 0
    while n < tokens:
        s = seqs[rng.randrange(len(seqs))]
        out.append(s)
        n += len(s[key])
    return out


def pad_stack(rows: list[torch.Tensor], value=0) -> torch.Tensor:
    width = max(len(r) for r in rows)
    out = torch.full((len(rows), width, *rows[0].shape[1:]), value, dtype=rows[0].dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out
