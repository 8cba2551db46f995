"""Medusa, EAGLE and the distilled drafter on tiny random models: greedy output equals plain (float32)."""
import pytest
import torch

from specviz.core.sampling import SamplingConfig
from specviz.engine import measure
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import tiny_llama
from specviz.proposers.draft_model import DraftModel, build_drafter
from specviz.proposers.eagle import Eagle, EagleHead
from specviz.proposers.hybrid import Hybrid
from specviz.proposers.medusa import Medusa, MedusaHeads
from specviz.proposers.vocab import SubsetHead

V = 96
SUBSET = torch.arange(2, 80)          # a reduced draft vocabulary: q is zero outside it


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)


def prompt(seed=0, length=30):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(2, V, (length,), generator=g).tolist()


def randomize(module, seed, scale=0.3):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(scale * torch.randn(p.shape, generator=g))
    return module


def medusa(target, seed=1):
    torch.manual_seed(seed)                 # construction draws from the global RNG
    heads = randomize(MedusaHeads(target.model.config.hidden_size, 4), seed)
    return Medusa(heads, SubsetHead(target.model.get_output_embeddings().weight, SUBSET))


def eagle(target, seed=2):
    torch.manual_seed(seed)
    head = randomize(EagleHead.for_target(target.model.config), seed, 0.05)
    return Eagle(head, target.model.get_input_embeddings(),
                 SubsetHead(target.model.get_output_embeddings().weight, SUBSET))


def drafter(target, seed=3):
    torch.manual_seed(seed)
    m = build_drafter(target.model, 1, SUBSET, init_layers=(1,))
    randomize(m.model.layers, seed, 0.02)
    return DraftModel(m, name="distilled")


def run(target, proposer, ids, k, n=40, sampling=SamplingConfig()):
    s, steps = measure.run(target, proposer, ids, DecodeConfig(k=k, max_new_tokens=n, stop_at_eos=False,
                                                               sampling=sampling))
    return torch.tensor(s.token_ids), s, steps


def hybrid(target):
    return Hybrid(eagle(target), n_min=2, n_max=3)


@pytest.mark.parametrize("make", [medusa, eagle, drafter, hybrid])
@pytest.mark.parametrize("k", [1, 3, 4])
def test_greedy_equals_plain(target, make, k):
    for seed in range(2):
        ids = prompt(seed)
        ref, _, _ = run(target, None, ids, 1)
        out, s, steps = run(target, make(target), ids, k)
        assert torch.equal(out, ref)
        assert s.drafted > 0 and s.target_passes == len(steps)


def test_heads_draft_from_the_hidden_state_that_produced_the_last_token(target):
    """With heads that copy the target (zero blocks), head 1 guesses the token after the next."""
    heads = MedusaHeads(target.model.config.hidden_size, 2)         # zero-initialised: identities
    p = Medusa(heads, SubsetHead(target.model.get_output_embeddings().weight, torch.arange(V)),
               add_prompt_ids=False)
    dec = Decoder(target, p, prompt(4), DecodeConfig(k=2, max_new_tokens=10, stop_at_eos=False))
    dec.prefill()
    ctx = dec.context()
    d = p.propose(ctx, 2)
    with torch.no_grad():
        again = target.model.lm_head(ctx.hidden[-1]).argmax()       # the token ids[-1] came from
    assert torch.equal(d.tokens, torch.stack([again, again]))


def test_eagle_cache_matches_a_fresh_head(target):
    """After rejections and rollbacks, the head's cached drafting equals drafting from scratch."""
    p = eagle(target)
    dec = Decoder(target, p, prompt(7), DecodeConfig(k=4, max_new_tokens=30, stop_at_eos=False))
    for _ in range(6):
        dec.step()
    ctx = dec.context()
    cached = p.propose(ctx, 4)
    fresh = eagle(target)
    fresh.reset(dec.prompt)
    assert torch.equal(cached.tokens, fresh.propose(ctx, 4).tokens)
    assert torch.allclose(cached.q, fresh.propose(ctx, 4).q)


@pytest.mark.parametrize("make", [medusa, eagle, drafter])
def test_sampled_drafts_stay_in_the_draft_vocabulary(target, make):
    ids = prompt(2)
    p = make(target)
    dec = Decoder(target, p, ids, DecodeConfig(k=3, max_new_tokens=20, stop_at_eos=False,
                                               sampling=SamplingConfig(temperature=0.8), seed=1))
    dec.prefill()
    allowed = torch.zeros(V, dtype=torch.bool)
    allowed[SUBSET] = True
    allowed[torch.tensor(ids)] = True                 # heads add the prompt's ids to their vocabulary
    d = p.propose(dec.context(), 3)
    p.update(dec.context(), 0)                        # as the loop would after a full rejection
    assert torch.allclose(d.q.sum(-1), torch.ones(len(d.tokens)))
    assert bool(allowed[d.tokens].all())
    if make is not drafter:
        assert float(d.q[:, ~allowed].sum()) == 0.0
    for _ in dec.run():
        pass
    assert len(dec.new_tokens) == 20


def test_the_drafter_is_an_ordinary_assistant_model_for_transformers(target):
    """The assembled drafter is a complete causal LM: transformers' assisted generation takes it."""
    torch.manual_seed(3)
    d = build_drafter(target.model, 1, SUBSET, init_layers=(1,))
    x = torch.tensor([prompt(6, 20)])
    kw = dict(max_new_tokens=16, do_sample=False, pad_token_id=1, eos_token_id=None)
    ref = target.model.generate(x, **kw)
    assert torch.equal(target.model.generate(x, assistant_model=d, **kw), ref)


def test_shipped_heads_refuse_a_target_of_another_shape(target):
    """The shipped artifacts were trained for the 576-wide default model: a tiny target gets one clear error."""
    from specviz.core.errors import ModelError
    from specviz.engine import artifacts
    from specviz.engine.methods import make_proposer

    assert artifacts.available()["medusa"], "models/medusa.* ship with the repository"
    with pytest.warns(artifacts.CheckpointMismatch), pytest.raises(ModelError, match="hidden size"):
        make_proposer("medusa", target)
