"""Shared by the tiny losslessness and equality tests (block verification, recycling, lookup's match rule, suffix):
the target's exact joint over two tokens, the sampled counts to hold against it, and plain greedy's ids."""
import torch

from specviz.engine import measure
from specviz.engine.decode import DecodeConfig, Decoder

# the tail [2, 5] occurred three times before: followed by 7, 1 and 7 (then 3, 3 and 6): copying drafts two tokens
SESSION_IDS = [2, 5, 7, 3, 2, 5, 1, 3, 2, 5, 7, 6, 2, 5]


def plain(t, ids, n) -> torch.Tensor:
    """Plain greedy decoding's n new ids (float32 tiny models: what every greedy speculative run must equal)."""
    s, _ = measure.run(t, None, ids, DecodeConfig(k=1, max_new_tokens=n, stop_at_eos=False))
    return torch.tensor(s.token_ids)


def joint(tgt, ids) -> torch.Tensor:
    """P(first two new tokens = a, b) under the target at T = 1, by enumerating every first token."""
    vs = tgt.vocab_size
    with torch.no_grad():
        p1 = tgt.model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1)                      # (vs,)
        nxt = torch.stack([tgt.model(input_ids=torch.tensor([ids + [a]])).logits[0, -1].softmax(-1)
                           for a in range(vs)])                                                        # (vs, vs)
    return (p1[:, None] * nxt).flatten()                                                               # (vs*vs,)


def first_two(tgt, proposer, ids, cfg: DecodeConfig, runs: int = 2000) -> tuple[torch.Tensor, int]:
    """Counts of the first two sampled tokens over `runs` seeds (a joint over vocab² pairs), and the tokens the
    first step drafted over all runs (so a test can check a draft was really verified)."""
    vs = tgt.vocab_size
    counts = torch.zeros(vs * vs)                                                                      # (vs*vs,)
    dec = Decoder(tgt, proposer, ids, cfg)
    drafted = 0
    for seed in range(runs):
        dec.cfg.seed = seed
        dec.reset()
        list(dec.run())
        a, b = dec.new_tokens[:2]
        counts[a * vs + b] += 1
        drafted += dec.steps[0].n_drafted
    return counts, drafted
