"""Train the EAGLE-style head on cached target features, unrolled on its own predictions.

Pass 1 sees the target's real features f_t with the embedding of token t+1 and learns f_{t+1}
(regression) and the target's greedy token at t+1 (cross-entropy through the frozen LM head).
Pass j > 1 feeds back pass j-1's predicted features instead of the real ones, so the head learns
to keep drafting from its own output (the calibration's features drifted after one step).
Token loss: cross-entropy on the greedy token ("ce"), or ("kl") cross-entropy against the target's
whole distribution p = softmax(LM head(f_{t+1})) on the draft vocabulary, so that q learns p's
spread and not only its argmax (sampled acceptance is Σ min(p, q); train.overlap).

The EAGLE-3 head (feature_layers set) uses the same unroll and loss with no regression term (reg = 0:
its fused input is no single feature to regress) and reads, for its real features, the chosen target
layers' outputs, recomputed once from the corpus's token ids by teacher forcing (corpus.load(..., layers=)).
"""
from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from specviz.proposers.eagle import EagleHead
from specviz.proposers.vocab import SubsetHead
from specviz.train.common import pack, pad_stack
from specviz.train.data import most_frequent_baseline, reply_mask
from specviz.train.overlap import overlap, target_p


def batch_tensors(seqs: list[dict], out: SubsetHead, layers: tuple[int, ...] = ()):
    """(real features the head reads (B, T, H) or fused (B, T, n*H), the target's final hidden states (B, T, H),
    ids, subset labels, valid, reply). Without layers: both feature tensors are the sequences' hidden states;
    with layers (EAGLE-3): the sequences' `layers` outputs (corpus.load(..., layers=) recomputes them from the
    ids by teacher forcing), concatenated in the order given."""
    ids = pad_stack([s["ids"].long() for s in seqs])                           # (B, T)
    lab = pad_stack([out.to_sub[s["label"].long()] for s in seqs], -1)        # (B, T) subset rows
    valid = pad_stack([torch.ones(len(s["ids"]), dtype=torch.bool) for s in seqs], False)
    reply = pad_stack([reply_mask(s) for s in seqs], False)
    if layers:
        missing = [j for j in layers if j not in seqs[0].get("layers", {})]
        if missing:
            raise ValueError(f"the sequences carry no outputs of layers {missing}: load the corpus with layers=")
        feat = pad_stack([torch.cat([s["layers"][j] for j in layers], -1) for s in seqs]).float()  # (B, T, n*H)
        final = pad_stack([s["hidden"] for s in seqs]).float()                 # (B, T, H)
    else:
        feat = final = pad_stack([s["hidden"] for s in seqs]).float()          # (B, T, H)
    return feat, final, ids, lab, valid, reply


def unroll(head: EagleHead, embed: torch.nn.Module, feat, ids, n_passes: int) -> list[torch.Tensor]:
    """The head's outputs per pass; entry t of pass j guesses f_{t+1} (read through head.readout and the
    LM head). Pass 1 reads the real features (fused to H first, for EAGLE-3); pass j > 1 its own outputs.
    Each (B, T-1, H)."""
    B, T, _ = feat.shape
    emb = embed(ids[:, 1:]).float()                                            # (B, T-1, H)
    pos = torch.arange(T - 1, device=feat.device)
    x = head.project(feat[:, :-1])                                             # real features (B, T-1, H)
    preds = []
    for _ in range(n_passes):
        y, _ = head(x, emb.to(x.dtype), pos)
        preds.append(y)
        x = torch.cat([x[:, :1], y[:, :-1]], 1)                                # own guesses, shifted
    return preds


def make_loss(head, embed, out: SubsetHead, train: list[dict], tokens: int, n_passes: int = 3,
              decay: float = 0.7, reg: float = 1.0, mode: str = "ce"):
    """The unrolled loss of one packed batch. A fused head (head.feature_layers) reads the sequences'
    `layers` outputs and has no regression term."""
    dev = next(head.parameters()).device
    layers = head.feature_layers
    if layers:
        reg = 0.0

    def loss_fn(step: int, rng: random.Random) -> torch.Tensor:
        feat, final, ids, lab, valid, _ = batch_tensors(pack(train, rng, tokens), out, layers)
        feat, final, ids, lab, valid = feat.to(dev), final.to(dev), ids.to(dev), lab.to(dev), valid.to(dev)
        m = valid[:, 1:]                                                       # (B, T-1)
        if mode == "kl":  # the target's distribution over the draft vocabulary, renormalised there
            p = out.sub_logits(final[:, 1:][m]).float().softmax(-1)            # (n, N)
        total = 0.0
        for j, y in enumerate(unroll(head, embed, feat, ids, n_passes)):
            logits = out.sub_logits(head.readout(y[m])).float()                # (n, N)
            if mode == "kl":
                ce = -(p * logits.log_softmax(-1)).sum(-1).mean()
            else:
                ce = F.cross_entropy(logits, lab[:, 1:][m], ignore_index=-1)
            r = F.smooth_l1_loss(y[m].float(), final[:, 1:][m]) if reg else 0.0
            total = total + decay ** j * (ce + reg * r)
        return total
    return loss_fn


@torch.no_grad()
def evaluate(head, embed, out: SubsetHead, held: list[dict], train: list[dict], n_passes: int = 3) -> dict:
    """Held-out top-1 agreement with the target's greedy token on reply positions, and Σ min(p, q) at
    T = 0.8, per drafting step (step j = the head running on its own features for j-1 steps).
    A fused head (head.feature_layers) reads the sequences' `layers` outputs."""
    dev = next(head.parameters()).device
    hits, n, loss_sum, kept = [0] * n_passes, 0, [0.0] * n_passes, [0.0] * n_passes
    for s in held:
        feat, final, ids, lab, valid, reply = batch_tensors([s], out, head.feature_layers)
        preds = unroll(head, embed, feat.to(dev), ids.to(dev), n_passes)
        m = reply[:, 1:] & valid[:, 1:]
        y = lab[:, 1:][m]
        p_sub = target_p(final[:, 1:][m.to(final.device)], out)                 # (n, N) the same for every step
        n += len(y)
        for j, p in enumerate(preds):
            logits = out.sub_logits(head.readout(p[m.to(dev)])).float().cpu()
            hits[j] += int((logits.argmax(-1) == y).sum())
            kept[j] += float(overlap(p_sub, logits).sum())
            ok = y >= 0
            loss_sum[j] += float(F.cross_entropy(logits[ok], y[ok], reduction="sum"))
    return {"heldout_top1_per_step": [round(h / max(1, n), 4) for h in hits],
            "heldout_loss_per_step": [round(x / max(1, n), 4) for x in loss_sum],
            "heldout_sum_min_pq_t08_per_step": [round(x / max(1, n), 4) for x in kept],
            "heldout_positions": n,
            "most_frequent_token_top1": round(most_frequent_baseline(train, held, offset=1), 4)}
