"""A small LoRA fine-tune of the target on another domain (Python's reference documentation).

Its only purpose here is to make a second checkpoint: same architecture, slightly different
weights, so the shipped heads can be measured on a model they were not trained for. The delta is
rank-r matrices on the attention projections; merging it gives the fine-tuned target.
"""
from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from specviz.train.common import split


class LoraLinear(torch.nn.Module):
    """y = W x + (alpha / r) * B A x, with W frozen and B = 0 at start."""

    def __init__(self, base: torch.nn.Linear, rank: int, alpha: float):
        super().__init__()
        self.base, self.scale = base, alpha / rank
        dev = base.weight.device                                   # beside the frozen weight (the target's device)
        self.lora_A = torch.nn.Parameter(torch.randn(rank, base.in_features, device=dev) / base.in_features ** 0.5)
        self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, rank, device=dev))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x.to(self.lora_A.dtype) @ self.lora_A.T @ self.lora_B.T).to(x.dtype) * self.scale


def attach(model: torch.nn.Module, rank: int, alpha: float, targets=("q_proj", "v_proj")) -> dict:
    """Wrap the target projections in place; returns {module name: LoraLinear}."""
    for p in model.parameters():
        p.requires_grad_(False)
    wrapped = {}
    for name, mod in list(model.named_modules()):
        for child, sub in list(mod.named_children()):
            if child in targets and isinstance(sub, torch.nn.Linear):
                lora = LoraLinear(sub, rank, alpha)
                setattr(mod, child, lora)
                wrapped[f"{name}.{child}" if name else child] = lora
    return wrapped


def delta_tensors(wrapped: dict) -> dict:
    out = {}
    for name, m in wrapped.items():
        out[f"{name}.lora_A"] = m.lora_A.detach()
        out[f"{name}.lora_B"] = m.lora_B.detach()
    return out


def detach(model: torch.nn.Module, wrapped: dict) -> None:
    """Put the original linears back (the frozen target is unchanged)."""
    mods = dict(model.named_modules())
    for name, m in wrapped.items():
        parent, _, child = name.rpartition(".")
        setattr(mods[parent] if parent else model, child, m.base)


def docs_chunks(tokenizer, chunk: int = 128, seed: int = 0) -> tuple[list, list]:
    """Python's reference documentation (pydoc topics, shipped with Python), cut in token chunks."""
    import pydoc_data.topics as topics

    text = "\n\n".join(topics.topics[k] for k in sorted(topics.topics))
    ids = tokenizer(text)["input_ids"]
    chunks = [torch.tensor(ids[i:i + chunk]) for i in range(0, len(ids) - chunk, chunk)]
    return split(chunks, heldout=0.05, seed=seed)


def lm_loss(model, batch: torch.Tensor) -> torch.Tensor:
    logits = model(input_ids=batch).logits[:, :-1].float()                     # (B, T-1, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))


def make_loss(model, train: list, batch: int):
    dev = next(model.parameters()).device

    def loss_fn(step: int, rng: random.Random) -> torch.Tensor:
        return lm_loss(model, torch.stack([train[rng.randrange(len(train))] for _ in range(batch)]).to(dev))
    return loss_fn


@torch.no_grad()
def heldout_loss(model, chunks: list, batch: int = 8) -> float:
    dev = next(model.parameters()).device
    tot = 0.0
    for i in range(0, len(chunks), batch):
        b = torch.stack(chunks[i:i + batch]).to(dev)
        tot += float(lm_loss(model, b)) * len(b)
    return tot / max(1, len(chunks))
