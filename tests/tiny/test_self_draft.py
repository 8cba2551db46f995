"""The self-drafter (the target's first N layers and its output layer, proposers/draft_model.first_layers) on tiny
random models: it shares the target's weights, computes what the target computes after N layers, drafts through
the registry, and greedy speculation with it writes plain greedy decoding's text."""
import pytest
import torch

from specviz.core.errors import InputError
from specviz.engine import methods as M
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import tiny_llama
from specviz.proposers.draft_model import DraftModel, first_layers
from specviz.teach import drafters as D


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=96, layers=4, hidden=32, seed=0)


def test_it_shares_the_targets_weights_and_adds_none(target):
    m = first_layers(target.model, 2)
    own = {id(p) for p in target.model.parameters()}
    assert {id(p) for p in m.parameters()} <= own                   # nothing new, nothing copied
    assert len(m.model.layers) == 2 and m.model.layers[1] is target.model.model.layers[1]
    assert m.lm_head is target.model.get_output_embeddings()


def test_its_logits_are_the_targets_state_after_n_layers_through_the_output_layer(target):
    ids = torch.arange(3, 15).view(1, -1)                           # (1, 12)
    with torch.inference_mode():
        out = target.model(input_ids=ids, output_hidden_states=True)
        body = target.model.get_decoder()
        by_hand = target.model.get_output_embeddings()(body.norm(out.hidden_states[2]))   # (1, 12, V)
        got = first_layers(target.model, 2)(input_ids=ids).logits   # (1, 12, V)
    assert torch.allclose(got, by_hand, atol=1e-5)
    assert not torch.allclose(got, out.logits, atol=1e-3)           # and not the full model's


def test_the_registry_builds_it_unoffered_and_refuses_a_bad_depth(target):
    p = M.make_proposer("self-draft", target, layers=3)
    assert isinstance(p, DraftModel) and p.name == "self-draft" and len(p.model.model.layers) == 3
    assert len(M.make_proposer("self-draft", target).model.model.layers) == 2      # half, by default
    assert "self-draft" in M.REGISTRY and "self-draft" not in M.available_methods()
    assert "self-draft" not in M.try_methods(target, None)[0]
    for bad in (0, 4):
        with pytest.raises(InputError, match="between 1 and 3"):
            M.make_proposer("self-draft", target, layers=bad)


def test_greedy_speculation_with_it_writes_plain_greedy_text(target):
    prompt = torch.tensor([5, 9, 2, 7, 11])                         # (5,)
    cfg = DecodeConfig(k=3, max_new_tokens=16, stop_at_eos=False)

    def text(proposer):
        d = Decoder(target, proposer, prompt, cfg)
        for _ in d.run():
            pass
        return d.summary()

    plain, spec = text(None), text(M.make_proposer("self-draft", target, layers=2))
    assert spec.token_ids == plain.token_ids
    assert spec.drafted > 0 and spec.alpha is not None


def test_the_labs_drafters_are_cheapest_first_with_priced_c(target):
    assert D.self_layers(30) == [4, 8, 15, 22] and D.self_layers(2) == [1]
    ds = D.drafters(target, ["lookup", "draft"])
    assert [d.layers for d in ds] == [1, 2, 3, None] and ds[-1].method == "draft"
    cs = [d.priced_c for d in ds[:-1]]
    assert cs == sorted(cs) and all(0 < c < 1 for c in cs)
