"""Corpus -> training tensors: the held-out split, the draft vocabulary, per-position labels."""
from __future__ import annotations

import hashlib

import torch

from specviz.proposers.vocab import frequent_ids
from specviz.train import corpus

SYSTEM_TOKENS = 20  # every chat prompt starts with the same system message; not worth training on
HELDOUT = 0.06      # share of distinct prompts held out


def prompt_key(s: dict) -> bytes:
    """The prompt's token ids as bytes: equal prompts (from any folder or seed) give equal keys."""
    return s["ids"][: s["prompt_len"]].to(torch.int32).numpy().tobytes()


def _hash(s: dict) -> float:
    """A stable number in [0, 1) per prompt."""
    return int.from_bytes(hashlib.blake2b(prompt_key(s), digest_size=8).digest(), "big") / 2 ** 64


def split_by_prompt(seqs: list[dict], heldout: float = HELDOUT) -> tuple[list[dict], list[dict]]:
    """Held out by a hash of the prompt, not by position in the corpus: a prompt asked twice (greedy
    replies to it are identical) is never on both sides, and adding folders moves nothing across.
    A corpus too small to hold any prompt out gives up its lowest-hash prompt."""
    h = [_hash(s) for s in seqs]
    lowest = min(h, default=0.0)
    held = [x < heldout or (lowest >= heldout and x == lowest) for x in h]
    return [s for s, f in zip(seqs, held) if not f], [s for s, f in zip(seqs, held) if f]


def load_split(corpus_dir: str, keys=("ids", "hidden", "label"), target=None, layers=None, cache=None):
    """(train, held-out) sequences of one corpus (one folder or several, comma-separated); the features
    of an ids-only corpus are recomputed on `target` (corpus.load; `cache` keeps them for the next job)."""
    return split_by_prompt(corpus.load(corpus_dir, keys, target=target, layers=layers, cache=cache))


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
