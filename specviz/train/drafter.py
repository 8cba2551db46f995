"""The distilled draft model: a 2-layer Llama sharing the target's frozen embedding and LM head.

Only its own layers and final norm are trained (and shipped); loading assembles a complete causal
LM around the target's embedding, whose output layer is the target's LM head restricted to the
draft vocabulary (logits -inf elsewhere, so q is zero there). Labels: the target's greedy token at
every position (cross-entropy), or its top-8 distribution (a truncated KL) for comparison.
"""
from __future__ import annotations

import random

import torch
import torch.nn.functional as F
from transformers import LlamaForCausalLM

from specviz.proposers.vocab import SubsetHead
from specviz.train.common import pack, pad_stack
from specviz.train.data import most_frequent_baseline, reply_mask
from specviz.train.overlap import sum_min


def own_state(drafter: LlamaForCausalLM) -> dict:
    """The drafter's own weights (what the artifact stores): layers and final norm."""
    return {k: v for k, v in drafter.state_dict().items()
            if k.startswith(("model.layers.", "model.norm."))}


def make_loss(drafter, out: SubsetHead, train: list[dict], tokens: int, mode: str = "ce"):
    dev = next(drafter.model.layers.parameters()).device

    def loss_fn(step: int, rng: random.Random) -> torch.Tensor:
        seqs = pack(train, rng, tokens)
        ids = pad_stack([s["ids"].long() for s in seqs]).to(dev)              # (B, T)
        h = drafter.model(input_ids=ids).last_hidden_state                    # (B, T, H)
        valid = pad_stack([torch.ones(len(s["ids"]), dtype=torch.bool) for s in seqs], False).to(dev)
        logits = out.sub_logits(h[valid]).float()                             # (n, N)
        if mode == "ce":
            lab = pad_stack([out.to_sub[s["label"].long()] for s in seqs], -1).to(dev)
            return F.cross_entropy(logits, lab[valid], ignore_index=-1)
        # truncated KL: the target's top-8 softmax as soft labels (rows outside the subset dropped)
        topi = pad_stack([out.to_sub[s["topi"].long()] for s in seqs], -1).to(dev)[valid]   # (n, 8)
        topv = pad_stack([s["topv"].float() for s in seqs]).to(dev)[valid]
        topv = topv.masked_fill(topi < 0, float("-inf"))
        p = topv.softmax(-1).nan_to_num(0.0)                                  # (n, 8)
        logq = logits.log_softmax(-1).gather(-1, topi.clamp(min=0))           # (n, 8)
        return -(p * logq).sum(-1).mean()
    return loss_fn


@torch.no_grad()
def evaluate(drafter, out: SubsetHead, held: list[dict], train: list[dict]) -> dict:
    dev = next(drafter.model.layers.parameters()).device
    hits = n = 0
    loss = overlap = 0.0
    for s in held:
        h = drafter.model(input_ids=s["ids"].long()[None].to(dev)).last_hidden_state[0]  # (T, H)
        m = reply_mask(s)
        logits = out.sub_logits(h[m.to(dev)]).float().cpu()
        y = out.to_sub[s["label"].long()][m]
        hits += int((logits.argmax(-1) == y).sum())
        ok = y >= 0
        loss += float(F.cross_entropy(logits[ok], y[ok], reduction="sum"))
        n += len(y)
        if "hidden" in s:  # Σ min(p, q) at T = 0.8 against the target's p at the same position
            overlap += float(sum_min(s["hidden"][m], logits, out).sum())
    return {"heldout_top1": round(hits / max(1, n), 4), "heldout_loss": round(loss / max(1, n), 4),
            "heldout_sum_min_pq_t08": round(overlap / max(1, n), 4) if "hidden" in (held or [{}])[0] else None,
            "heldout_positions": n, "most_frequent_token_top1": round(most_frequent_baseline(train, held, 0), 4)}
