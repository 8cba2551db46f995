"""The losslessness lab: parsing, the tallies through verify(), the reduced real-model case, the mismatch demo."""
import pytest
import torch
from stats import matches

from specviz.core.errors import InputError, ModelError
from specviz.core.sampling import SamplingConfig
from specviz.engine.models import check_same_tokenizer, tiny_llama
from specviz.proposers.draft_model import DraftModel
from specviz.proposers.lookup import PromptLookup
from specviz.teach import lab as L, mismatch


def test_parse_normalises_and_refuses_bad_input():
    assert torch.allclose(L.parse_dist("1, 1, 2", "p"), torch.tensor([0.25, 0.25, 0.5]))
    for bad in ["", "a, b", "0.5, -0.1", "0, 0", "1", "1, inf"]:
        with pytest.raises(InputError):
            L.parse_dist(bad, "p")
    with pytest.raises(InputError, match="same tokens"):
        L.pair("0.5, 0.5", "0.2, 0.3, 0.5")


def test_stats_match_the_formulas():
    p, q = L.pair("0.6, 0.3, 0.1", "0.2, 0.2, 0.6")
    s = L.stats(p, q)
    assert s.acceptance == pytest.approx(0.2 + 0.2 + 0.1)
    assert torch.allclose(s.residual, torch.tensor([0.4, 0.1, 0.0]) / 0.5)
    assert s.tv == pytest.approx(0.5)


@pytest.mark.parametrize("preset", list(L.PRESETS))
def test_speculative_output_follows_p_not_q(preset):
    p, q = L.pair(*L.PRESETS[preset])
    sim = L.simulate(p, q, 6000, seed=1)
    assert sim.trials == 6000 and sim.checkpoints[-1] == 6000
    assert matches(sim.counts, p)                       # chi-square at p = 1e-4
    if L.stats(p, q).tv > 0.1:
        if (q > 0).sum() >= 3:  # the chi-square needs some cells
            assert not matches(sim.counts, q)
        assert sim.tv_to_q[-1] > sim.tv_to_p[-1] + 0.05
    # drafts kept: a binomial with success probability sum min(p, q)
    a = L.stats(p, q).acceptance
    sd = (a * (1 - a) / 6000) ** 0.5
    assert abs(sim.accepted / 6000 - a) <= 4 * sd + 1e-9


@pytest.mark.parametrize("rule", ["resample from p", "accept every draft"])
def test_a_broken_rule_drifts_away_from_p_to_its_own_distribution(rule):
    p, q = L.pair(*L.PRESETS["q far from p"])
    drifted = L.output_distribution(p, q, rule)
    assert 0.5 * float((drifted - p).abs().sum()) > 0.1       # the closed form says: not p
    sim = L.simulate(p, q, 6000, seed=2, rule=rule)
    assert matches(sim.counts, drifted)                        # the draws follow the broken rule's distribution
    assert not matches(sim.counts, p)                          # ... and not p (the exact rule's negative control)


def test_the_proof_rows_add_up_to_p_and_p_reject_is_the_distance():
    p, q = L.pair(*L.PRESETS["q misses a token p likes"])
    rows = L.proof_rows(p, q)
    for r, px in zip(rows, p.tolist()):
        assert r["sum"] == pytest.approx(px, abs=1e-6) and r["P(reject)·residual(x)"] == pytest.approx(
            r["(p(x) − q(x))⁺"], abs=1e-6)
    assert torch.allclose(L.output_distribution(p, q, "exact"), p, atol=1e-6)
    s = L.stats(p, q)
    assert 1 - s.acceptance == pytest.approx(s.tv, abs=1e-6)
    with pytest.raises(InputError, match="unknown rule"):
        L.simulate(p, q, 10, rule="keep half")


def test_one_hot_q_keeps_the_draft_with_probability_p_of_x():
    p = torch.tensor([0.1, 0.6, 0.3])
    q = torch.tensor([0.0, 0.0, 1.0])
    assert L.stats(p, q).acceptance == pytest.approx(0.3)
    sim = L.simulate(p, q, 4000, seed=2)
    assert abs(sim.accepted / 4000 - 0.3) < 4 * (0.21 / 4000) ** 0.5
    assert matches(sim.counts, p)


def test_reduce_keeps_the_mass_and_the_order():
    g = torch.Generator().manual_seed(0)
    p = torch.softmax(4 * torch.randn(5000, generator=g), 0)
    q = torch.softmax(4 * torch.randn(5000, generator=g), 0)
    red = L.reduce(L.RealCase(p, q, 0, False), coverage=0.99)
    assert red.p.sum().item() == pytest.approx(1.0) and red.q.sum().item() == pytest.approx(1.0)
    assert red.tail_p < 0.01 + 1e-6 and red.tail_q < 0.01 + 1e-6
    assert torch.allclose(red.p[:-1], p[red.ids], atol=1e-6)
    assert all(red.p[i] >= red.p[i + 1] for i in range(len(red.ids) - 1))


@pytest.fixture(scope="module")
def tiny_pair():
    return tiny_llama(vocab_size=64, seed=0), tiny_llama(vocab_size=64, seed=3)


def test_real_case_takes_q_from_the_proposer(tiny_pair):
    target, drafter = tiny_pair
    samp = SamplingConfig(temperature=1.0)
    case = L.real_case(target, DraftModel(drafter.model), [5, 6, 7, 8], samp)
    with torch.no_grad():
        want_p = torch.softmax(target.model(torch.tensor([[5, 6, 7, 8]])).logits[0, -1].float(), -1)
        want_q = torch.softmax(drafter.model(torch.tensor([[5, 6, 7, 8]])).logits[0, -1].float(), -1)
    assert torch.allclose(case.p, want_p, atol=1e-5) and torch.allclose(case.q, want_q, atol=1e-5)
    assert not case.one_hot
    with pytest.raises(InputError):
        L.real_case(target, DraftModel(drafter.model), [5, 6], SamplingConfig())


def test_real_case_with_lookup_is_one_hot(tiny_pair):
    target, _ = tiny_pair
    ids = [3, 4, 5, 9, 3, 4, 5]
    case = L.real_case(target, PromptLookup(n=3), ids, SamplingConfig(temperature=1.0))
    assert case.one_hot and case.drafted == 9 and case.q[9] == 1 and case.q.sum() == 1
    assert L.stats(case.p, case.q).acceptance == pytest.approx(float(case.p[9]), abs=1e-6)
    assert L.real_case(target, PromptLookup(n=3), [1, 2, 3, 4], SamplingConfig(temperature=1.0)) is None


def test_simulate_real_follows_p(tiny_pair):
    target, drafter = tiny_pair
    case = L.real_case(target, DraftModel(drafter.model), [5, 6, 7, 8], SamplingConfig(temperature=0.5))
    red = L.reduce(case, coverage=0.999)
    sim, shown = L.simulate_real(red, 3000, seed=4)
    assert matches(sim.counts, red.p)
    assert sim.tv_to_p[-1] < sim.tv_to_q[-1] or L.stats(red.p, red.q).tv < 0.05


def test_mismatch_demo_refuses_with_both_sizes():
    target = tiny_llama(vocab_size=64, seed=0)  # its own: the tokenizer set below must not leak into other tests
    tok = mismatch.other_tokenizer()
    assert tok.get_vocab() == mismatch.other_tokenizer.__wrapped__().get_vocab()  # deterministic
    other = mismatch.other_drafter()
    from specviz.engine.models import load_tokenizer

    target.tokenizer = load_tokenizer()
    d = mismatch.demo(target, other, "The lighthouse keeper kept a logbook.")
    assert d.drafter_vocab == len(tok) and d.target_vocab == 64
    assert d.refusal and str(d.target_vocab) in d.refusal and str(d.drafter_vocab) in d.refusal
    assert d.target_ids != d.drafter_ids and d.first_difference is not None
    with pytest.raises(ModelError):
        check_same_tokenizer(target.tokenizer, tok, len(tok), len(tok))  # same size, other ids: still refused


# -- tree sampling, by hand ---------------------------------------------------------------------------------
def test_sibling_candidates_keep_the_mass_they_cover_and_the_output_follows_p():
    import torch

    from specviz.teach import lab as L

    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        p = torch.rand(5, generator=g) ** 2
        p = p / p.sum()
        cands = torch.randperm(5, generator=g)[: 1 + int(torch.randint(3, (1,), generator=g))].tolist()
        t = L.siblings(p, cands)
        assert torch.allclose(t.output, p, atol=1e-6)                      # exact: the output follows p
        assert abs(t.some_kept - float(p[cands].sum())) < 1e-6             # = the p mass the candidates cover
        for j, c in enumerate(cands[:-1]):                                 # each rejection removes its candidate
            assert float(t.residuals[j + 1][c]) == 0.0
        broken = L.siblings(p, cands, "against p")
        if len(cands) > 1 and float(p[cands[0]]) > 0.05 and float(p[cands[1]]) > 0.05:
            assert 0.5 * float((broken.output - p).abs().sum()) > 0.005     # the negative control drifts


def test_sibling_draws_through_the_tree_verifier_converge_to_p_and_the_broken_rule_does_not():
    from specviz.teach import lab as L

    p, _ = L.pair(*L.PRESETS["q far from p"])
    counts, kept = L.simulate_siblings(p, [4, 3], 6000, "exact", seed=1)
    assert 0.5 * float((counts / counts.sum() - p).abs().sum()) < 0.03
    assert abs(kept / 6000 - 0.70) < 0.03                                  # p(E) + p(D)
    counts, _ = L.simulate_siblings(p, [4, 3], 6000, "against p", seed=1)
    emp = counts / counts.sum()
    assert 0.5 * float((emp - p).abs().sum()) > 0.08                       # drifts from p ...
    assert 0.5 * float((emp - L.siblings(p, [4, 3], "against p").output).abs().sum()) < 0.03  # ... to its own law


def test_candidates_are_parsed_or_refused_plainly():
    import pytest

    from specviz.core.errors import InputError
    from specviz.teach import lab as L

    assert L.parse_candidates("E, d", 5) == [4, 3] and L.parse_candidates("0 2", 5) == [0, 2]
    for bad in ("", "Z", "A, A", "A B C D"):
        with pytest.raises(InputError):
            L.parse_candidates(bad, 5)
