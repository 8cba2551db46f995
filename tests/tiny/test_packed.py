"""engine/packed.py: bfloat16 linear layers on oneDNN-packed weights give F.linear's bits, and stay out of the way."""
import copy
import pickle

import pytest
import torch
import torch.nn.functional as F

from specviz.engine import packed
from specviz.engine.models import as_dtype, tiny_llama
from specviz.engine.packed import MAX_ROWS, PackedLinear, pack_linears, prepack

needs_onednn = pytest.mark.skipif(not packed.available(), reason="no oneDNN with native bfloat16 on this CPU")


def layer(out: int = 96, inp: int = 64, seed: int = 0) -> PackedLinear:
    torch.manual_seed(seed)
    lin = torch.nn.Linear(inp, out, bias=False).to(torch.bfloat16)
    lin.__class__ = PackedLinear
    return lin


@needs_onednn
@pytest.mark.parametrize("rows", [1, 9, 25, MAX_ROWS])
def test_a_packed_pass_equals_f_linear_bit_for_bit(rows):
    lin = layer()
    x = torch.randn(1, rows, 64, dtype=torch.bfloat16)                  # (b, t, in)
    with torch.inference_mode():
        out = lin(x)
    assert lin._packed is not None                                       # it did take the packed path
    assert torch.equal(out, F.linear(x, lin.weight))


@needs_onednn
def test_a_longer_pass_and_float32_and_gradients_take_f_linear():
    lin = layer()
    with torch.inference_mode():
        lin(torch.randn(1, MAX_ROWS + 1, 64, dtype=torch.bfloat16))
    assert lin._packed is None                                           # a prefill-sized pass: F.linear
    x = torch.randn(3, 64, dtype=torch.bfloat16, requires_grad=True)
    lin(x).sum().backward()                                              # the packed op has no backward
    assert x.grad is not None and lin._packed is None
    if torch.float32 not in packed.PACKS:                                # float32 on F.linear on this CPU
        lin.float()
        with torch.no_grad():
            x32 = torch.randn(2, 64)
            assert torch.equal(lin(x32), F.linear(x32, lin.weight))


@needs_onednn
def test_a_changed_weight_is_packed_again():
    lin = layer()
    x = torch.randn(1, 64, dtype=torch.bfloat16)
    with torch.no_grad():
        lin(x)
        lin.weight.mul_(2)                                               # in place: its version moves
        assert torch.equal(lin(x), F.linear(x, lin.weight))


@needs_onednn
def test_a_packed_model_copies_pickles_and_casts():
    m = tiny_llama(dtype=torch.bfloat16)
    assert sum(type(x) is PackedLinear for x in m.model.modules()) == 2 * 7 + 1   # 7 per layer + the output layer
    ids = torch.tensor([[3, 5, 7, 9]])
    with torch.inference_mode():
        a = m.model(ids).logits
    c = copy.deepcopy(m.model)                                           # the opaque packed tensor stays behind
    pickle.loads(pickle.dumps(m.model))
    with torch.inference_mode():
        assert torch.equal(c(ids).logits, a)
    f32 = as_dtype(m, "float32")
    with torch.inference_mode():
        f32.model(ids)
    assert torch.equal(next(iter(f32.model.state_dict().values())), next(iter(m.model.state_dict().values())).float())


def test_packing_never_touches_other_modules():
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4))
    n = pack_linears(m)
    assert n in (0, 1) and type(m[1]) is torch.nn.LayerNorm


@needs_onednn
def test_weights_are_packed_at_load_not_in_the_first_run():
    m = tiny_llama(dtype=torch.bfloat16)
    layers = [x for x in m.model.modules() if type(x) is PackedLinear]
    assert layers and all(x._packed is not None for x in layers)          # before any forward pass
    f32 = tiny_llama(dtype=torch.float32)
    expected = 2 * 7 + 1 if torch.float32 in packed.PACKS else 0          # float32 packs on AVX2 CPUs only
    assert prepack(f32.model) == expected
    bf = as_dtype(f32, "bfloat16")
    assert all(x._packed is not None for x in bf.model.modules() if type(x) is PackedLinear)


needs_f32 = pytest.mark.skipif(torch.float32 not in packed.PACKS, reason="float32 runs on F.linear on this CPU")


@needs_f32
@pytest.mark.parametrize("rows", [1, 9, 25])
def test_a_float32_packed_pass_is_f_linear_to_rounding(rows):
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 96, bias=False)
    lin.__class__ = PackedLinear
    x = torch.randn(1, rows, 64)                                         # (b, t, in)
    with torch.inference_mode():
        out = lin(x)
    assert lin._packed is not None                                       # it did take the packed path
    torch.testing.assert_close(out, F.linear(x, lin.weight), rtol=1e-5, atol=1e-5)


@needs_f32
def test_float32_speculation_on_packed_linears_writes_plain_greedy_text():
    """The tiny model packed in float32 (as load_model packs the default model on an AVX2 CPU): lookup and a
    random drafter of 8 tokens, verified 9 rows at a time, write plain decoding's tokens, torch.equal."""
    from specviz.engine.decode import DecodeConfig, Decoder
    from specviz.engine.methods import make_proposer
    m = tiny_llama(vocab_size=96, layers=2, hidden=64, dtype=torch.float32)
    assert all(x._packed is not None for x in m.model.modules() if type(x) is PackedLinear)
    prompt = torch.tensor([5, 6, 7, 8, 5, 6, 7, 8, 5, 6, 7, 8, 9, 10, 11, 12])

    def text(proposer) -> torch.Tensor:
        d = Decoder(m, proposer, prompt, DecodeConfig(k=8, max_new_tokens=40, record=False, stop_at_eos=False))
        for _ in d.run():
            pass
        return torch.tensor(d.new_tokens)

    plain = text(None)
    assert torch.equal(text(make_proposer("lookup", m)), plain)
    assert torch.equal(text(make_proposer("recycle", m)), plain)


@needs_onednn
@pytest.mark.parametrize("shape", [(576, 1536), (1536, 576), (576, 576), (192, 576)])   # SmolLM2-135M's layers
@pytest.mark.parametrize("threads", [1, 2])
def test_a_row_is_the_same_bits_in_a_one_row_pass_and_in_any_longer_one(shape, threads):
    """What greedy speculation needs of a linear layer: the one-token step's row equals that row inside a verify pass
    of any length up to MAX_ROWS. Random weights of the default model's shapes. On the AVX512-BF16 EPYC the
    1536-wide down projection fails this with packed.ONE_AS_TWO off (a lone row summed otherwise; 2026-12-08)."""
    out, inp = shape
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        lin = layer(out, inp)
        for seed in range(4):
            g = torch.Generator().manual_seed(seed)
            x = (torch.randn(MAX_ROWS, inp, generator=g) * (1 + seed)).to(torch.bfloat16)   # (rows, in)
            with torch.inference_mode():
                one = torch.cat([lin(x[j:j + 1]) for j in range(MAX_ROWS)])              # one-token steps
                assert [m for m in range(2, MAX_ROWS + 1) if not torch.equal(lin(x[:m]), one[:m])] == []
    finally:
        torch.set_num_threads(before)
