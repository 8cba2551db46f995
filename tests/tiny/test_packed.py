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
    assert prepack(f32.model) == 0                                        # float32 weights: nothing to pack
    bf = as_dtype(f32, "bfloat16")
    assert all(x._packed is not None for x in bf.model.modules() if type(x) is PackedLinear)
