"""The training jobs' held-out split: keyed by the prompt, so no prompt is on both sides."""
import random

import torch

from specviz.train.common import split
from specviz.train.data import split_by_prompt


def _seqs(n_prompts: int, repeats: int, seed: int = 0) -> list[dict]:
    r = random.Random(seed)
    prompts = [[r.randrange(49152) for _ in range(r.randint(5, 30))] for _ in range(n_prompts)]
    out = []
    for _ in range(repeats):          # the same prompt asked again (another seed, another folder)
        for p in prompts:
            reply = [r.randrange(49152) for _ in range(r.randint(3, 20))]
            out.append(dict(ids=torch.tensor(p + reply), prompt_len=len(p)))
    r.shuffle(out)
    return out


def _key(s):
    return tuple(s["ids"][: s["prompt_len"]].tolist())


def _straddling(train, held) -> int:
    return len({_key(s) for s in train} & {_key(s) for s in held})


def test_no_prompt_on_both_sides_and_index_split_fails_it():
    seqs = _seqs(400, 3)
    train, held = split_by_prompt(seqs)
    assert _straddling(train, held) == 0 and len(train) + len(held) == len(seqs)
    assert _straddling(*split(seqs)) > 0      # negative control: a split by position leaks prompts


def test_adding_folders_moves_nothing_and_share_is_about_six_percent():
    seqs = _seqs(3000, 1)
    _, held = split_by_prompt(seqs[:1000])
    _, held_all = split_by_prompt(seqs)
    assert {_key(s) for s in held} <= {_key(s) for s in held_all}
    assert 0.045 < len(held_all) / len(seqs) < 0.075


def test_a_tiny_corpus_still_holds_one_prompt_out():
    seqs = _seqs(5, 2)
    train, held = split_by_prompt(seqs)
    assert len(held) >= 2 and len(train) >= 2 and _straddling(train, held) == 0
