"""Pure core: the acceptance rule is lossless (with a negative control), in milliseconds."""
import torch
from stats import chi2_critical, chi2_stat, matches

from specviz.core.sampling import SamplingConfig, logits_to_probs
from specviz.core.verify import Verdict, acceptance_probability, one_hot_q, residual, verify

V = 8


def random_pair(seed: int, k: int = 1):
    g = torch.Generator().manual_seed(seed)
    p = torch.distributions.Dirichlet(torch.ones(V)).sample((k + 1,))  # (k+1, V)
    q = torch.distributions.Dirichlet(torch.ones(V)).sample((k,))      # (k, V)
    return p, q, g


def draw_draft(q: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    return torch.stack([torch.multinomial(q[i], 1, generator=g)[0] for i in range(len(q))])  # (k,)


def accept_everything(draft, q, p, greedy, generator=None) -> Verdict:
    """A broken verifier for the negative control: keeps every draft."""
    k = len(draft)
    return Verdict(k, int(torch.multinomial(p[k], 1, generator=generator)), "bonus", [], [])


def emitted_counts(verifier, p, q, g, n=20000, position=0):
    """Histogram of the emitted token at `position` (over samples that reach it)."""
    counts = torch.zeros(V)
    for _ in range(n):
        draft = draw_draft(q, g)
        v = verifier(draft, q, p, False, g)
        out = draft[: v.n_accepted].tolist() + [v.next_token]
        if len(out) > position:
            counts[out[position]] += 1
    return counts


def test_output_follows_p_and_accept_all_fails():
    for seed in range(3):
        p, q, g = random_pair(seed, k=1)
        good = emitted_counts(verify, p, q, g)
        assert matches(good, p[0]), chi2_stat(good, p[0])
        bad = emitted_counts(accept_everything, p, q, g)
        stat, df = chi2_stat(bad, p[0])
        assert stat > chi2_critical(df), "the check cannot tell a broken verifier apart"


def test_second_position_follows_p_given_first_accepted():
    p, q, g = random_pair(7, k=2)
    counts = emitted_counts(verify, p, q, g, n=30000, position=1)
    assert counts.sum() > 3000
    assert matches(counts, p[1])


def test_residual_is_normalised_positive_part():
    p, q, _ = random_pair(1)
    r = residual(p[0], q[0])
    expected = (p[0] - q[0]).clamp_min(0)
    assert torch.allclose(r, expected / expected.sum())
    assert torch.allclose(residual(p[0], p[0]), p[0])  # p == q: nothing to correct; falls back to p


def test_acceptance_probability_is_sum_of_min():
    p, q, g = random_pair(2)
    n, acc = 20000, 0
    for _ in range(n):
        acc += verify(draw_draft(q, g), q, p, False, g).n_accepted
    expected = float(acceptance_probability(p[0], q[0]))
    sd = (expected * (1 - expected) / n) ** 0.5
    assert abs(acc / n - expected) < 4.5 * sd


def test_greedy_is_argmax_match():
    logits = torch.tensor([[0.0, 3.0, 1.0], [2.0, 0.0, 1.0], [0.0, 0.0, 5.0]])  # (3, V=3)
    p = logits_to_probs(logits, SamplingConfig(0.0))
    q = one_hot_q(torch.tensor([1, 2]), 3)
    v = verify(torch.tensor([1, 2]), q, p, greedy=True)
    assert (v.n_accepted, v.next_token, v.origin) == (1, 0, "correction")
    v = verify(torch.tensor([1, 0]), one_hot_q(torch.tensor([1, 0]), 3), p, greedy=True)
    assert (v.n_accepted, v.next_token, v.origin) == (2, 2, "bonus")
    assert v.draws == [None, None]


def test_deterministic_q_accepts_with_probability_p():
    """With lookup's one-hot q the rule reduces to: accept x with probability p(x)."""
    p, _, g = random_pair(3)
    x = torch.tensor([int(p[0].argmin())])
    q = one_hot_q(x, V)
    n = 20000
    acc = sum(verify(x, q, p, False, g).n_accepted for _ in range(n))
    px = float(p[0, x])
    assert abs(acc / n - px) < 4.5 * (px * (1 - px) / n) ** 0.5 + 1e-3


def test_top_k_top_p_filter_same_for_p_and_q():
    logits = torch.tensor([[4.0, 3.0, 2.0, 1.0, 0.0]])
    pk = logits_to_probs(logits, SamplingConfig(1.0, top_k=2))
    assert (pk[0, 2:] == 0).all() and torch.isclose(pk.sum(), torch.tensor(1.0))
    pp = logits_to_probs(logits, SamplingConfig(1.0, top_p=0.7))
    kept = (pp[0] > 0).sum().item()
    full = logits.softmax(-1)[0]
    assert kept == 2 and full[0] < 0.7 <= full[:2].sum()  # keeps the token that crosses top-p
