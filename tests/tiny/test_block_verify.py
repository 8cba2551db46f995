"""Block verification in the decode loop, on tiny random models: greedy output equals plain (float32) for every
chain method; sampled output follows the target's joint distribution over two tokens for every chain proposer,
and drawing the correction from p itself (no residual) must fail; trees and unknown modes are refused."""
import pytest
import torch

from specviz.core import block as block_module
from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import tiny_llama
from specviz.proposers.draft_model import DraftModel
from specviz.proposers.eagle import Eagle
from specviz.proposers.lookup import PromptLookup
from specviz.proposers.medusa import Medusa, MedusaHeads
from specviz.proposers.vocab import SubsetHead
from tests.stats import matches
from tests.tiny import twotoken as T2
from tests.tiny.test_heads import drafter, eagle, medusa, prompt, randomize
from tests.tiny.test_trees import eagle_tree, medusa_tree


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=96, layers=2, hidden=64, seed=0)


@pytest.mark.parametrize("make", [lambda t: PromptLookup(n_min=1, n_max=3), eagle, medusa, drafter],
                         ids=["lookup", "eagle", "medusa", "drafter"])
def test_block_greedy_equals_plain(target, make):
    for seed in range(2):
        ids = prompt(seed) * 2                         # a repeat, so lookup drafts too
        s, steps = measure.run(target, make(target), ids,
                               DecodeConfig(k=4, max_new_tokens=40, stop_at_eos=False, verify="block"))
        assert torch.equal(torch.tensor(s.token_ids), T2.plain(target, ids, 40))
        assert all(st.verify == "block" and st.block is not None for st in steps)
        assert any(st.n_drafted > 0 for st in steps)


def test_block_refuses_trees_and_unknown_modes(target):
    with pytest.raises(InputError, match="tree"):
        Decoder(target, medusa_tree(target), prompt(1), DecodeConfig(k=4, verify="block")).step()
    with pytest.raises(InputError, match="verify mode"):
        DecodeConfig(verify="joint").check()


VS = 8
IDS = T2.SESSION_IDS                                   # lookup finds [2, 5] and drafts two tokens


def chain_proposers(tgt):
    """Every chain proposer, sized for an 8-token vocabulary."""
    every = torch.arange(VS)
    out = tgt.model.get_output_embeddings().weight

    def eagle_chain():
        p = eagle_tree(tgt, seed=5, ids=every, depth=3, width=2, nodes=6)
        return Eagle(p.head, p.embed, p.out)

    def medusa_chain():
        torch.manual_seed(6)
        return Medusa(randomize(MedusaHeads(tgt.model.config.hidden_size, 3), 6), SubsetHead(out, every))

    def draft_model():
        return DraftModel(tiny_llama(vocab_size=VS, layers=1, hidden=32, seed=9).model)

    return {"lookup": lambda: PromptLookup(n_min=2, n_max=2), "eagle": eagle_chain, "medusa": medusa_chain,
            "draft": draft_model}


def first_two(tgt, make, runs=2000):
    cfg = DecodeConfig(k=2, max_new_tokens=3, stop_at_eos=False, verify="block",
                       sampling=SamplingConfig(temperature=1.0))
    counts, drafted = T2.first_two(tgt, make(), IDS, cfg, runs)
    assert drafted > runs                        # the first step drafts two tokens (a block to verify)
    return counts


@pytest.mark.parametrize("name", ["lookup", "eagle", "medusa", "draft"])
def test_block_sampling_is_lossless_over_two_tokens(monkeypatch, name):
    tgt = tiny_llama(vocab_size=VS, layers=1, hidden=32, seed=4)
    joint = T2.joint(tgt, IDS)                                                                         # (VS*VS,)
    make = chain_proposers(tgt)[name]
    assert matches(first_two(tgt, make), joint)
    real = block_module.block_residual
    monkeypatch.setattr(block_module, "block_residual",                     # the broken rule: no residual
                        lambda tau, w, q, p, correction="block": real(tau, w, q, p, "none"))
    assert not matches(first_two(tgt, make), joint)


def test_records_carry_the_weights_beside_token_wise(target):
    dec = Decoder(target, eagle(target), prompt(2), DecodeConfig(k=4, max_new_tokens=20, stop_at_eos=False,
                                                                verify="block",
                                                                sampling=SamplingConfig(temperature=1.0)))
    for rec in dec.run():
        b = rec.block
        assert len(b.weights.h) == len(b.weights.ratios) == len(b.draws) == rec.n_drafted
        assert rec.n_accepted == max([i + 1 for i, (d, h) in enumerate(zip(b.draws, b.weights.h)) if d <= h],
                                     default=0)
        assert 0 <= b.token_wise_kept <= rec.n_drafted
