"""Block verification (core/block.py) against the paper's closed form, exactly, by enumeration over every draft:
the toy example's 10/9 -> 11/9, never fewer tokens kept than token-wise, the output's joint distribution equal
to the target's (and not equal without the residual's factor p_tau), and the sampler's tau following its weights."""
import itertools

import torch
from stats import matches

from specviz.core.block import (
    block_residual,
    block_weights,
    expected_kept as expected_given,
    stop_probabilities,
    verify_block,
)


def chain_rows(P: torch.Tensor, Q: torch.Tensor, start: int, draft: tuple[int, ...]):
    """A Markov toy: row i of p and q is the distribution after the token before it. -> p (k+1, V), q (k, V)"""
    prev = [start, *draft]
    return P[prev], Q[prev[:-1]]


def draft_prob(Q, start, draft) -> float:
    prev = [start, *draft]
    return float(torch.prod(torch.stack([Q[a, b] for a, b in zip(prev, draft)])))


def expected_kept(P, Q, start, k, rule) -> float:
    """E[drafts kept] over every draft X ~ q, exactly."""
    V = P.shape[0]
    total = 0.0
    for draft in itertools.product(range(V), repeat=k):
        pr = draft_prob(Q, start, draft)
        if pr == 0:
            continue
        p, q = chain_rows(P, Q, start, draft)
        w = block_weights(torch.tensor(draft), q, p)
        if rule == "block":
            total += pr * sum(i * s for i, s in enumerate(stop_probabilities(w.h)))
        else:                                            # token-wise: keep X_i while each test passes
            reach = 1.0
            for r in w.ratios:
                reach *= min(1.0, r)
                total += pr * reach
    return total


def test_the_papers_toy_example_10_9_to_11_9():
    """Sun et al. 2024, section 2: M_b = (1/3, 2/3), M_s = (2/3, 1/3), context-free, k = 2."""
    P = torch.tensor([[1 / 3, 2 / 3]] * 2, dtype=torch.float64)
    Q = torch.tensor([[2 / 3, 1 / 3]] * 2, dtype=torch.float64)
    assert abs(expected_kept(P, Q, 0, 2, "token") - 10 / 9) < 1e-12
    assert abs(expected_kept(P, Q, 0, 2, "block") - 11 / 9) < 1e-12


def markov_pair(seed, V=3):
    """Two random Markov chains over V tokens (flat Dirichlet rows, from this seed alone)."""
    g = torch.Generator().manual_seed(seed)
    e = -torch.rand(2, V, V, generator=g, dtype=torch.float64).log()                     # (2, V, V) exponential
    P, Q = e / e.sum(-1, keepdim=True)                                                   # (V, V) each
    return P, Q


def test_block_never_keeps_fewer_than_token_wise():
    """The paper's Theorem 2, on random Markov toys; strictly more on some (q differs from p)."""
    gains = []
    for seed in range(6):
        P, Q = markov_pair(seed)
        for k in (2, 3):
            t, b = expected_kept(P, Q, 0, k, "token"), expected_kept(P, Q, 0, k, "block")
            assert b >= t - 1e-12
            gains.append(b - t)
    assert max(gains) > 1e-3


def output_joint(P, Q, start, k, correction="block") -> torch.Tensor:
    """Exact distribution of the first k+1 tokens: one block step, then the target's own sampling to k+1 tokens."""
    V = P.shape[0]
    out = torch.zeros((V,) * (k + 1), dtype=torch.float64)
    for draft in itertools.product(range(V), repeat=k):
        pr = draft_prob(Q, start, draft)
        p, q = chain_rows(P, Q, start, draft)
        w = block_weights(torch.tensor(draft), q, p)
        for tau, s in enumerate(stop_probabilities(w.h)):
            if pr * s == 0:
                continue
            y = block_residual(tau, w, q, p, correction)                      # (V,)
            for tail in itertools.product(range(V), repeat=k + 1 - tau):       # y, then the target's own tokens
                seq = (*draft[:tau], *tail)
                prob = pr * s * float(y[tail[0]])
                for a, b in zip(seq[tau:], seq[tau + 1:]):
                    prob *= float(P[a, b])
                out[seq] += prob
    return out


def target_joint(P, start, n) -> torch.Tensor:
    V = P.shape[0]
    out = torch.zeros((V,) * n, dtype=torch.float64)
    for seq in itertools.product(range(V), repeat=n):
        prev = [start, *seq]
        out[seq] = float(torch.prod(torch.stack([P[a, b] for a, b in zip(prev, seq)])))
    return out


def test_output_follows_the_target_exactly_and_not_without_the_factor():
    for seed in range(3):
        P, Q = markov_pair(seed + 10)
        for k in (2, 3):
            exact = target_joint(P, 0, k + 1)
            assert torch.allclose(output_joint(P, Q, 0, k), exact, atol=1e-12)
    P, Q = markov_pair(10)
    exact = target_joint(P, 0, 4)
    for broken in ("token", "none"):                  # summed |difference|: 0.014 (token-wise residual), 0.35 (none)
        assert (output_joint(P, Q, 0, 3, broken) - exact).abs().sum() > 5e-3


def test_sampled_tau_follows_the_weights():
    """verify_block's draw: tau = the last i with eta_i <= h_i has the distribution stop_probabilities says."""
    P, Q = markov_pair(3)
    draft = (1, 0, 2)
    p, q = chain_rows(P.float(), Q.float(), 0, draft)
    w = block_weights(torch.tensor(draft), q, p)
    g = torch.Generator().manual_seed(0)
    counts = torch.zeros(4)
    kept_token_wise = torch.zeros(4)
    for _ in range(4000):
        v = verify_block(torch.tensor(draft), q, p, False, g)
        counts[v.n_accepted] += 1
        kept_token_wise[v.token_wise_kept] += 1
    assert matches(counts, torch.tensor(stop_probabilities(w.h)))
    reach = [1.0]
    for r in w.ratios:
        reach.append(reach[-1] * min(1.0, r))
    token = torch.tensor([reach[i] - (reach[i + 1] if i < 3 else 0.0) for i in range(4)])
    assert matches(kept_token_wise, token)
    assert not matches(counts, token)                 # the two rules differ on these drafts


def test_greedy_keeps_the_argmax_prefix():
    p = torch.eye(4)[[2, 1, 3, 0]]                                          # (4, V) one-hot rows
    q = torch.full((3, 4), 0.25)
    v = verify_block(torch.tensor([2, 1, 0]), q, p, True)
    assert (v.n_accepted, v.next_token, v.origin) == (2, 3, "correction")
    v = verify_block(torch.tensor([2, 1, 3]), q, p, True)
    assert (v.n_accepted, v.next_token, v.origin) == (3, 0, "bonus")


def test_expected_kept_given_the_drafts_is_what_each_rule_keeps_on_average():
    """core's per-draft expectations against the frequencies of verify_block's own tau and token-wise count over
    many uniforms (same drafts); summed over every draft with its q-probability they give the exact totals above."""
    P, Q = markov_pair(3)
    draft = (1, 0, 2)
    p, q = chain_rows(P, Q, 0, draft)
    w = block_weights(torch.tensor(draft), q, p)
    eb, et = expected_given(w)
    g = torch.Generator().manual_seed(0)
    runs = [verify_block(torch.tensor(draft), q, p, greedy=False, generator=g) for _ in range(20000)]
    mb = sum(v.n_accepted for v in runs) / len(runs)
    mt = sum(v.token_wise_kept for v in runs) / len(runs)
    assert abs(mb - eb) < 0.03 and abs(mt - et) < 0.03 and abs(eb - et) > 0.03        # the two rules do differ here
    for k in (2, 3):
        total = [0.0, 0.0]
        for d in itertools.product(range(3), repeat=k):
            pp, qq = chain_rows(P, Q, 0, d)
            b, t = expected_given(block_weights(torch.tensor(d), qq, pp))
            total[0] += draft_prob(Q, 0, d) * b
            total[1] += draft_prob(Q, 0, d) * t
        assert abs(total[0] - expected_kept(P, Q, 0, k, "block")) < 1e-12
        assert abs(total[1] - expected_kept(P, Q, 0, k, "token")) < 1e-12
