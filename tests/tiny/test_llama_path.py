"""engine/llama.py: a Llama body's pass run module by module gives transformers' forward's bits, on every kind of
pass the decoder makes (prefill, one-token steps, chains, trees, the feature taps), and is taken only where it can."""
import pytest
import torch

from specviz.core.tree import position_offsets
from specviz.engine import decode as D, llama
from specviz.engine.attention import new_cache
from specviz.engine.decode import DecodeConfig, Decoder, body_pass, tree_pass_mask
from specviz.engine.methods import make_proposer
from specviz.engine.models import tiny_llama


def _hf(body, layers=(), **kw):
    """transformers' own forward (with layer hooks for the taps), as body_pass ran it before engine/llama.py."""
    with D.layer_outputs(body, layers) as taps:
        h = body(**kw).last_hidden_state
    return h, (torch.cat([taps[i] for i in layers], -1) if layers else None)


def _both(body, layers, ids, c1, c2, **kw):
    with torch.inference_mode():
        assert llama.supported(body, dict(input_ids=ids, cache=c2, use_cache=True, **kw))
        a = _hf(body, layers, input_ids=ids, cache=c1, use_cache=True, **kw)
        b = llama.body_pass(body, layers, ids, c2, **kw)
    return a, b


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_same_bits_as_transformers_on_every_pass(dtype):
    t = tiny_llama(layers=3, hidden=64, dtype=dtype, seed=3)
    body = t.model.get_decoder()
    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(2, 96, (1, 20), generator=g)                           # (1, 20)
    c1, c2 = new_cache(t.model), new_cache(t.model)
    layers = (0, 2)
    passes = [dict(ids=prompt), dict(ids=prompt[:, :1]), dict(ids=prompt[:, 3:9])]   # prefill, a step, a chain
    parents = [-1, 0, 0, 1, 2]                                                     # a tree over 5 nodes
    for p in passes:
        (h1, f1), (h2, f2) = _both(body, layers, p["ids"], c1, c2)
        assert torch.equal(h1, h2) and torch.equal(f1, f2)
        assert all(torch.equal(a.keys, b.keys) for a, b in zip(c1.layers, c2.layers))
    L = c1.get_seq_length()
    mask = tree_pass_mask(parents, L, dtype)[None, None]                          # (1, 1, 6, L+6)
    pos = (L + position_offsets(parents))[None]                                    # (1, 6)
    ids = torch.randint(2, 96, (1, 6), generator=g)
    (h1, f1), (h2, f2) = _both(body, layers, ids, c1, c2, attention_mask=mask, position_ids=pos)
    assert torch.equal(h1, h2) and torch.equal(f1, f2)
    (h1, _), (h2, none) = _both(body, (), ids[:, :1], c1, c2)                      # no taps asked: none made
    assert torch.equal(h1, h2) and none is None


@pytest.mark.parametrize("method", ["lookup", "recycle", "suffix"])
def test_decoder_writes_the_same_run_either_way(method, monkeypatch):
    """A whole greedy run through the decoder (chains, trees, rollbacks) on both paths: the same tokens and the
    same logits at every step."""
    t = tiny_llama(layers=2, hidden=64, dtype=torch.bfloat16, seed=1)
    prompt = torch.tensor([5, 6, 7, 8, 5, 6, 7, 9, 5, 6, 7, 8, 5, 6, 7])

    def run():
        d = Decoder(t, make_proposer(method, t, 4), prompt, DecodeConfig(k=4, max_new_tokens=40, stop_at_eos=False))
        steps = list(d.run())
        return d.ids, [r.verify_s >= 0 for r in steps], [(r.drafted, r.emitted) for r in steps]

    fast = run()
    monkeypatch.setattr(llama, "supported", lambda body, kw: False)
    slow = run()
    assert torch.equal(fast[0], slow[0]) and fast[2] == slow[2]


def test_taken_only_where_it_reproduces_transformers():
    t = tiny_llama(layers=2, hidden=32)
    body = t.model.get_decoder()
    cache = new_cache(t.model)
    ids = torch.tensor([[3, 4]])
    with torch.inference_mode():
        assert llama.supported(body, dict(input_ids=ids, cache=cache, use_cache=True))
        assert not llama.supported(body, dict(input_ids=ids, cache=None, use_cache=True))        # no cache
        assert not llama.supported(body, dict(input_ids=ids, cache=cache, output_attentions=True))  # other kwargs
        h = body.layers[0].register_forward_hook(lambda *a: None)                                # someone's hook
        assert not llama.supported(body, dict(input_ids=ids, cache=cache))
        h.remove()
    assert not llama.supported(body, dict(input_ids=ids, cache=cache))             # gradients on: training
    with torch.inference_mode():                                                    # through body_pass, hooks run
        seen = []
        h = body.layers[1].register_forward_hook(lambda mod, a, out: seen.append(out))
        body_pass(body, (), input_ids=ids, cache=new_cache(t.model), use_cache=True)
        h.remove()
    assert len(seen) == 1


@pytest.mark.parametrize("method", ["draft", "self-draft"])
def test_drafters_draft_the_same_either_way(method):
    """A draft model (and the target cut short) through body_pass drafts the same tokens with the same q as through
    its own forward."""
    from specviz.core.sampling import SamplingConfig
    from specviz.proposers.base import Context

    t = tiny_llama(layers=3, hidden=64, dtype=torch.bfloat16, seed=2)
    drafter = tiny_llama(layers=1, hidden=32, dtype=torch.bfloat16, seed=5) if method == "draft" else None
    fast = make_proposer(method, t, 4, drafter=drafter)
    slow = make_proposer(method, t, 4, drafter=drafter)
    assert fast.body is not None
    slow.body = None                                                              # the model's own forward
    ids = torch.tensor([5, 6, 7, 8, 9, 10, 11])
    for temp in (0.0, 0.9):
        drafts = []
        for p in (fast, slow):
            p.reset(ids)
            g = torch.Generator().manual_seed(7)
            drafts.append(p.propose(Context(ids, None, SamplingConfig(temperature=temp), g), 4))
        assert torch.equal(drafts[0].tokens, drafts[1].tokens) and torch.equal(drafts[0].q, drafts[1].q)
