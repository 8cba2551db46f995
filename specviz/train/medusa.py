"""Train Medusa heads on cached target hidden states: head i at position t learns the target's
greedy token at t+1+i (its prediction given the true prefix), through the frozen LM head."""
from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from specviz.proposers.medusa import MedusaHeads
from specviz.proposers.vocab import SubsetHead
from specviz.train.data import SYSTEM_TOKENS, most_frequent_baseline, reply_mask
from specviz.train.overlap import sum_min


def head_labels(label: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(T,) greedy labels -> (T, K): column i = label[t+1+i] (the token head i+1 guesses), -1 past the end."""
    T = len(label)
    out = torch.full((T, n_heads), -1, dtype=torch.long)
    for i in range(n_heads):
        if i + 1 < T:
            out[: T - 1 - i, i] = label[1 + i:].long()
    return out


def flatten(seqs: list[dict], n_heads: int, out: SubsetHead):
    hs, ys, ms = [], [], []
    for s in seqs:
        y = head_labels(s["label"], n_heads)
        y = torch.where(y >= 0, out.to_sub[y.clamp(min=0)], -1)                   # ids -> subset rows
        keep = torch.arange(len(y)) >= SYSTEM_TOKENS
        hs.append(s["hidden"][keep])
        ys.append(y[keep])
        ms.append(reply_mask(s)[keep])
    return torch.cat(hs), torch.cat(ys), torch.cat(ms)    # (N, H) bf16, (N, K), (N,)


def make_loss(heads: MedusaHeads, out: SubsetHead, H: torch.Tensor, Y: torch.Tensor, batch: int,
              decay: float = 0.8):
    def loss_fn(step: int, rng: random.Random) -> torch.Tensor:
        g = torch.Generator().manual_seed(rng.randrange(2**31))
        idx = torch.randint(len(H), (batch,), generator=g)
        h = H[idx].to(next(heads.parameters()).device, torch.float32)           # (B, H)
        logits = out.sub_logits(heads(h))                                        # (K, B, N)
        y = Y[idx].to(logits.device).T                                           # (K, B)
        losses = [F.cross_entropy(logits[i].float(), y[i], ignore_index=-1) * decay ** i
                  for i in range(heads.n_heads)]
        return torch.stack(losses).sum()
    return loss_fn


@torch.no_grad()
def evaluate(heads: MedusaHeads, out: SubsetHead, held: list[dict], train: list[dict]) -> dict:
    H, Y, M = flatten(held, heads.n_heads, out)
    H, Y = H[M], Y[M]
    dev = next(heads.parameters()).device
    acc, loss = [], []
    for i in range(heads.n_heads):
        logits = out.sub_logits(heads(H.to(dev, torch.float32))[i]).float()     # (N, sub)
        ok = Y[:, i] >= 0
        acc.append(round(float((logits.argmax(-1).cpu()[ok] == Y[ok, i]).float().mean()), 4))
        tgt = Y[:, i].clone()
        loss.append(round(float(F.cross_entropy(logits.cpu()[ok & (tgt >= 0)], tgt[ok & (tgt >= 0)])), 4))
    return {"heldout_top1_per_head": acc, "heldout_loss_per_head": loss,
            "heldout_sum_min_pq_t08_per_head": overlap_per_head(heads, out, held),
            "heldout_positions": int(len(H)),
            "most_frequent_token_top1": round(most_frequent_baseline(train, held, offset=2), 4)}


@torch.no_grad()
def overlap_per_head(heads: MedusaHeads, out: SubsetHead, held: list[dict]) -> list[float]:
    """Held-out Σ min(p, q) at T = 0.8 per head: head i at reply position t against the target's p at
    t+1+i (recomputed from the cached hidden state there)."""
    dev = next(heads.parameters()).device
    tot, n = [0.0] * heads.n_heads, [0] * heads.n_heads
    for s in held:
        h = s["hidden"]                                                         # (T, H)
        pos = torch.nonzero(reply_mask(s)).flatten()                            # reply positions t
        q_all = heads(h[pos].to(dev, torch.float32))                            # (K, n, H)
        for i in range(heads.n_heads):
            ok = pos + 1 + i < len(h)
            if ok.any():
                q = out.sub_logits(q_all[i][ok.to(dev)]).float()                # (n_i, N)
                tot[i] += float(sum_min(h[pos[ok] + 1 + i], q, out).sum())
                n[i] += int(ok.sum())
    return [round(t / max(1, c), 4) for t, c in zip(tot, n)]
