"""Corpus -> training tensors: the held-out split, the draft vocabulary, per-position labels."""
from __future__ import annotations

import torch

from specviz.proposers.vocab import frequent_ids
from specviz.train import corpus
from specviz.train.common import split

SYSTEM_TOKENS = 20  # every chat prompt starts with the same system message; not worth training on


def load_split(corpus_dir: str, keys=("ids", "hidden", "label"), seed: int = 0):
    seqs = corpus.load(corpus_dir, keys)
    return split(seqs, seed=seed)


def draft_vocab(train: list[dict], size: int, vocab_size: int, always=()) -> torch.Tensor:
    """Ids the target predicts most often in the training split, topped up with the lowest ids."""
    labels = torch.cat([s["label"] for s in train]).long()
    seen = frequent_ids(labels, min(size, int((torch.bincount(labels) > 0).sum())), vocab_size, always)
    low = torch.arange(vocab_size)
    low = low[~torch.isin(low, seen)][: max(0, size - len(seen))]
    return torch.unique(torch.cat([seen, low]))


def reply_mask(s: dict) -> torch.Tensor:
    """(T,) True at positions whose next token belongs to the reply (what drafting actually sees)."""
    T = len(s["ids"])
    m = torch.zeros(T, dtype=torch.bool)
    m[max(0, s["prompt_len"] - 1): T - 1] = True
    return m


def most_frequent_baseline(train: list[dict], held: list[dict], offset: int = 1) -> float:
    """Top-1 accuracy of always guessing the most frequent label (the floor a head must beat)."""
    top = int(torch.bincount(torch.cat([s["label"] for s in train]).long()).argmax())
    hits = n = 0
    for s in held:
        lab = s["label"].long()
        m = reply_mask(s)[: len(lab) - offset]
        tgt = lab[offset:][m] if offset else lab[m]
        hits += int((tgt == top).sum())
        n += len(tgt)
    return hits / max(1, n)
