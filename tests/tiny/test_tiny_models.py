"""Tiny random-initialised models built here (no download): the engine end to end, in float32."""
import copy

import pytest
import torch
from stats import matches
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from specviz.core import costmodel as be
from specviz.core.errors import InputError, ModelError
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure
from specviz.engine.attention import new_cache
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.methods import make_proposer
from specviz.engine.models import check_same_tokenizer, tiny_llama
from specviz.proposers.draft_model import DraftModel
from specviz.proposers.lookup import PromptLookup

V = 96


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)


@pytest.fixture(scope="module")
def other_drafter():
    """An unrelated random drafter: nearly every draft is rejected."""
    return tiny_llama(vocab_size=V, layers=1, hidden=32, seed=1)


@pytest.fixture(scope="module")
def noisy_drafter(target):
    """The target with noise on its weights: some drafts kept, some rejected."""
    m = copy.deepcopy(target.model)
    g = torch.Generator().manual_seed(9)
    with torch.no_grad():
        for w in m.parameters():
            w.add_(0.1 * w.std() * torch.randn(w.shape, generator=g))
    return m


def prompt(seed=0, length=40):
    g = torch.Generator().manual_seed(seed)
    base = torch.randint(2, V, (12,), generator=g).tolist()
    return (base * 4)[:length]  # repetition gives lookup something to match


def plain_ids(target, ids, n=48):
    s, _ = measure.run(target, None, ids, DecodeConfig(k=1, max_new_tokens=n, stop_at_eos=False))
    return torch.tensor(s.token_ids)


@pytest.mark.parametrize("k,n", [(1, 1), (2, 2), (4, 3), (8, 2)])
def test_lookup_greedy_equals_plain(target, k, n):
    for seed in range(3):
        ids = prompt(seed)
        ref = plain_ids(target, ids)
        s, steps = measure.run(target, PromptLookup(n=n), ids,
                               DecodeConfig(k=k, max_new_tokens=48, stop_at_eos=False))
        assert torch.equal(torch.tensor(s.token_ids), ref)
        assert s.drafted > 0 and s.target_passes == len(steps)
        assert sum(st.n_emitted for st in steps) == 48


@pytest.mark.parametrize("k", [1, 3, 6])
def test_drafter_greedy_equals_plain(target, other_drafter, noisy_drafter, k):
    ids = prompt(5)
    ref = plain_ids(target, ids)
    # unrelated (mostly rejected), noisy copy (mixed), the target itself (always accepted)
    for d in (other_drafter.model, noisy_drafter, target.model):
        s, steps = measure.run(target, DraftModel(d), ids,
                               DecodeConfig(k=k, max_new_tokens=48, stop_at_eos=False))
        assert torch.equal(torch.tensor(s.token_ids), ref)
    assert s.accepted == s.drafted and s.tokens_per_pass > 1  # self-drafting: every draft kept


def test_rejections_and_rollback_leave_caches_exact(target, noisy_drafter):
    ids = prompt(3)
    dec = Decoder(target, DraftModel(noisy_drafter), ids,
                  DecodeConfig(k=4, max_new_tokens=30, stop_at_eos=False))
    steps = list(dec.run())
    assert any(s.rejected_at is not None for s in steps), "the test needs a rejection to roll back"
    assert any(0 < s.n_accepted < s.n_drafted for s in steps), "and a partial acceptance"
    T = len(dec.ids)
    assert dec.cache.get_seq_length() == T - 1
    fresh = new_cache(target.model)                                       # the decoder's kind (float64)
    with torch.inference_mode():
        target.model(input_ids=dec.ids[:-1].view(1, -1), cache=fresh, use_cache=True)
    for layer in range(target.model.config.num_hidden_layers):
        assert torch.allclose(dec.cache.layers[layer].keys, fresh.layers[layer].keys, atol=1e-5)
        assert torch.allclose(dec.cache.layers[layer].values, fresh.layers[layer].values, atol=1e-5)
    # the drafter's own cache holds only committed tokens
    assert dec.proposer.cache.get_seq_length() <= T - 1


def test_step_records_add_up(target):
    ids = prompt(1)
    s, steps = measure.run(target, PromptLookup(n=2), ids, DecodeConfig(k=4, max_new_tokens=40, stop_at_eos=False))
    assert s.drafted == sum(len(st.drafted) for st in steps)
    assert s.accepted == sum(st.n_accepted for st in steps)
    assert s.tokens_per_pass == pytest.approx(40 / len(steps))
    for st in steps:
        assert st.emitted[: st.n_accepted] == st.drafted[: st.n_accepted]
        assert len(st.p_top) == len(st.drafted) + 1 and len(st.q_top) == len(st.drafted)
        assert len(st.logit_gap) == len(st.emitted) and all(g >= 0 for g in st.logit_gap)
        if st.rejected_at is not None:
            assert st.p_rejected.shape == (V,) and st.q_rejected.shape == (V,)
        assert st.q_deterministic


def test_stepping_reset_and_seed_reproducible(target, other_drafter):
    ids = prompt(2)
    cfg = DecodeConfig(k=3, max_new_tokens=20, sampling=SamplingConfig(0.9), seed=11, stop_at_eos=False)
    dec = Decoder(target, DraftModel(other_drafter.model), ids, cfg)
    first = [dec.step() for _ in range(3)]
    dec.reset()
    list(dec.run())
    again = dec.steps[:3]
    assert [s.emitted for s in first] == [s.emitted for s in again]
    assert all(r is not None for s in again for r in s.draws)


def test_sampling_is_lossless_on_a_small_vocab():
    """First two sampled tokens under speculation follow the target's own distribution."""
    vs = 12
    tgt = tiny_llama(vocab_size=vs, layers=1, hidden=32, seed=3)
    drf = tiny_llama(vocab_size=vs, layers=1, hidden=32, seed=4)
    with torch.no_grad():  # sharpen the random models so p and q differ clearly
        tgt.model.lm_head.weight.mul_(8.0)
        drf.model.lm_head.weight.mul_(8.0)
    ids = [2, 5, 7, 3]
    cfg = SamplingConfig(temperature=1.0)
    with torch.no_grad():
        p1 = tgt.model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1)          # (vs,)
        p2 = torch.zeros(vs)
        for a in range(vs):
            p2 += p1[a] * tgt.model(input_ids=torch.tensor([ids + [a]])).logits[0, -1].softmax(-1)
    c1, c2 = torch.zeros(vs), torch.zeros(vs)
    dec = Decoder(tgt, DraftModel(drf.model), ids,
                  DecodeConfig(k=2, max_new_tokens=2, sampling=cfg, stop_at_eos=False))
    for seed in range(3000):
        dec.cfg.seed = seed
        dec.reset()
        list(dec.run())
        a, b = dec.new_tokens
        c1[a] += 1
        c2[b] += 1
    assert matches(c1, p1) and matches(c2, p2)
    # negative control: the draft's own distribution is not what came out
    with torch.no_grad():
        q1 = drf.model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1)
    assert not matches(c1, q1)


def word_tokenizer(words):
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token=words[0]))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token=words[0])


def test_drafter_with_other_vocabulary_is_refused(target):
    small = tiny_llama(vocab_size=64, layers=1, hidden=32, seed=2)
    with pytest.raises(ModelError, match="96.*64"):
        make_proposer("draft", target, drafter=small)
    words = ["<unk>", "a", "b", "c"]
    with pytest.raises(ModelError, match="different token ids"):
        check_same_tokenizer(word_tokenizer(words), word_tokenizer(["<unk>", "b", "a", "c"]), 4, 4)
    assert "same output layer" in check_same_tokenizer(word_tokenizer(words), word_tokenizer(words), 4, 4)


def test_padding_rows_are_allowed_and_q_covers_only_real_tokens(target):
    words = ["<unk>", "a", "b", "c"]
    case = check_same_tokenizer(word_tokenizer(words), word_tokenizer(words), 4, 8)  # drafter padded to 8 rows
    assert "padding rows" in case and "4 vs 8" in case
    with pytest.raises(ModelError, match="only 3 rows"):  # a layer smaller than the tokenizer is not padding
        check_same_tokenizer(word_tokenizer(words), word_tokenizer(words), 4, 3)
    from specviz.core.sampling import SamplingConfig
    from specviz.proposers.base import Context
    from specviz.proposers.draft_model import DraftModel
    padded = tiny_llama(vocab_size=100, layers=1, hidden=32, seed=3)  # 96 real ids + 4 padding rows
    prop = DraftModel(padded.model, vocab=96, n_ids=90)
    ctx = Context(ids=torch.tensor([2, 3, 4]), hidden=None, sampling=SamplingConfig(temperature=1.0),
                  generator=torch.Generator().manual_seed(0))
    d = prop.propose(ctx, 2)
    assert d.q.shape == (2, 96)
    assert torch.all(d.q[:, 90:] == 0) and torch.allclose(d.q.sum(-1), torch.ones(2))


def test_bad_input_is_refused(target):
    with pytest.raises(InputError, match="empty"):
        Decoder(target, None, [], DecodeConfig())
    with pytest.raises(InputError, match="k must be"):
        Decoder(target, None, [3, 4], DecodeConfig(k=0))
    with pytest.raises(InputError, match="context window"):
        Decoder(target, None, list(range(2, 90)) * 6, DecodeConfig(max_new_tokens=10))
    with pytest.raises(InputError, match="n-min"):
        make_proposer("lookup", target, n_min=4, n_max=2)
    with pytest.raises(InputError, match="unknown method"):
        make_proposer("telepathy", target)


def test_fingerprint_ignores_running_dtype_but_not_weights(target):
    from specviz.engine.models import fingerprint
    m32 = copy.deepcopy(target.model)
    m16 = copy.deepcopy(target.model).to(torch.bfloat16)
    assert fingerprint(m32) == fingerprint(m16)
    with torch.no_grad():
        m32.lm_head.weight[0, 0] += 0.5
    assert fingerprint(m32) != fingerprint(m16)


# -- tau = 1 + alpha-hat * k-bar on records of real runs (docs/metrics.md) ----------------------------
@pytest.mark.parametrize("method,temperature", [("lookup", 0.0), ("draft", 0.0), ("draft", 1.0)])
def test_tau_identity_holds_on_a_tiny_model_run(target, noisy_drafter, method, temperature):
    g = torch.Generator().manual_seed(0)
    ids = (torch.randint(2, V, (12,), generator=g).tolist() * 4)[:40]
    prop = PromptLookup(n_min=2, n_max=2) if method == "lookup" else DraftModel(noisy_drafter)
    cfg = DecodeConfig(k=4, max_new_tokens=60, stop_at_eos=False, sampling=SamplingConfig(temperature=temperature))
    s, steps = measure.run(target, prop, ids, cfg)
    assert s.drafted > 0 and 0 < s.accepted < s.drafted  # a run with both kept and rejected drafts
    # only the last step can be cut short by max_new_tokens; the identity is exact up to what it cut
    cut = sum(r.n_accepted + 1 - r.n_emitted for r in steps)
    assert 0 <= cut <= cfg.k and all(r.n_emitted == r.n_accepted + 1 for r in steps[:-1])
    assert s.tokens_per_pass == pytest.approx(be.tau_identity(s.draft_acceptance_rate, s.mean_k) - cut / len(steps))
    # and alpha (tested) is the larger rate: untested drafts are not counted as failures
    assert s.alpha >= s.draft_acceptance_rate


def test_greedy_drafting_proposes_the_argmax_without_a_q_and_stays_lossless_at_temperature_0(target):
    """vLLM's draft_sample_method = 'greedy' at T > 0: the drafter's argmax, no q (the verifier treats it as
    one-hot). At T = 0 both settings give plain greedy decoding's tokens."""
    import torch

    from specviz.core.sampling import SamplingConfig
    from specviz.proposers.base import Context
    from specviz.proposers.draft_model import DraftModel

    d = tiny_llama(vocab_size=V, layers=1, hidden=32, seed=1)
    ids = torch.tensor([2, 3, 4, 5, 6, 7])
    g = DraftModel(d.model, greedy_draft=True)
    g.reset(ids)
    draft = g.propose(Context(ids=ids, hidden=None, sampling=SamplingConfig(temperature=0.8),
                              generator=torch.Generator().manual_seed(0)), 3)
    assert draft.q is None
    ref = DraftModel(d.model)
    ref.reset(ids)
    greedy = ref.propose(Context(ids=ids, hidden=None, sampling=SamplingConfig(), generator=None), 3)
    assert draft.tokens.tolist() == greedy.tokens.tolist()          # the argmax chain
    plain, _ = measure.run(target, None, [2, 3, 4, 5, 6, 7], DecodeConfig(k=3, max_new_tokens=12))
    spec, _ = measure.run(target, DraftModel(d.model, greedy_draft=True), [2, 3, 4, 5, 6, 7],
                       DecodeConfig(k=3, max_new_tokens=12))
    assert spec.token_ids == plain.token_ids


def test_greedy_drafting_is_lossless_when_sampling():
    """draft_sample_method = 'greedy' at T = 1: the drafter's argmax checked as a one-hot draft (kept with p(x),
    correction from p without x); the first token still follows p. Control: the drafter's argmax is not p."""
    vs = 12
    tgt = tiny_llama(vocab_size=vs, layers=1, hidden=32, seed=3)
    drf = tiny_llama(vocab_size=vs, layers=1, hidden=32, seed=4)
    with torch.no_grad():
        tgt.model.lm_head.weight.mul_(8.0)
        drf.model.lm_head.weight.mul_(8.0)
    ids = [2, 5, 7, 3]
    with torch.no_grad():
        p1 = tgt.model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1)          # (vs,)
        x = int(drf.model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
    c1 = torch.zeros(vs)
    dec = Decoder(tgt, DraftModel(drf.model, greedy_draft=True), ids,
                  DecodeConfig(k=2, max_new_tokens=1 + 1, sampling=SamplingConfig(temperature=1.0), stop_at_eos=False))
    for seed in range(2000):
        dec.cfg.seed = seed
        dec.reset()
        list(dec.run())
        c1[dec.new_tokens[0]] += 1
    assert matches(c1, p1)
    assert not matches(c1, torch.nn.functional.one_hot(torch.tensor(x), vs).float() * 0.9 + 0.1 / vs)
