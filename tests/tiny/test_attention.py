"""The row-invariant attention (engine/attention.py): a row of a verify pass, chain or tree, equals the
one-token step along its own path bit for bit in bfloat16, so greedy speculation writes plain decoding's text."""
import random

import pytest
import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from specviz.core.sampling import SamplingConfig
from specviz.core.tree import tree_mask
from specviz.engine.attention import NAME, Float64Layer, RowCache, row_invariant_attention
from specviz.engine.decode import DecodeConfig, Decoder, tree_pass_mask
from specviz.engine.measure import run
from specviz.engine.methods import make_proposer
from specviz.engine.models import tiny_llama
from specviz.proposers.base import Draft, Proposer


class _Module:          # what sdpa_attention_forward reads from the attention module
    num_key_value_groups = 3
    is_causal = True
    training = False


def _qkv(L: int, t: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    k = torch.randn(1, 3, L + t, 64, generator=g).to(torch.bfloat16) * 3          # (1, Hkv, L+t, d)
    v = torch.randn(1, 3, L + t, 64, generator=g).to(torch.bfloat16)
    q = torch.randn(1, 9, t, 64, generator=g).to(torch.bfloat16)                 # (1, H, t, d)
    return q, k, v


def _rows_differing(fn, q, k, v, L: int, parents: list[int], mask_dtype) -> int:
    """Rows of one pass over [root, nodes] (tree mask after an L-token cache) that differ from a one-query call
    over the cache and that row's own ancestors."""
    t = len(parents) + 1
    tm = tree_mask(parents)                                                      # (t, t)
    mask = tree_pass_mask(parents, L, torch.bfloat16)                            # the decoder's own (t, L+t)
    if mask_dtype == torch.bool:                                                 # transformers' sdpa_mask form
        mask = mask == 0
    full = fn(_Module, q, k, v, mask[None, None], 0.125)[0]                      # (1, t, H, d)
    bad = 0
    for r in range(t):
        keys = list(range(L)) + [L + j for j in range(t) if tm[r, j]]
        one = fn(_Module, q[:, :, r:r + 1], k[:, :, keys], v[:, :, keys], None, 0.125)[0]   # (1, 1, H, d)
        bad += not torch.equal(one[0, 0], full[0, r])
    return bad


@pytest.mark.parametrize("L", [1, 37, 99, 232, 316, 365, 519])   # 99, 232, ... : where a bfloat16 sum had differed
def test_a_chain_row_equals_the_one_token_step(L):
    for t in (2, 11, 25):
        q, k, v = _qkv(L, t, seed=L * 100 + t)
        chain = list(range(-1, t - 2))                                           # node i's parent is node i-1
        assert _rows_differing(row_invariant_attention, q, k, v, L, chain, torch.bool) == 0


def test_a_tree_row_equals_the_one_token_step_along_its_path():
    rnd = random.Random(0)
    for trial in range(40):
        L, n = rnd.randint(1, 400), rnd.randint(2, 24)
        parents = [-1] + [rnd.randint(-1, i - 1) for i in range(1, n)]
        q, k, v = _qkv(L, n + 1, seed=trial)
        assert _rows_differing(row_invariant_attention, q, k, v, L, parents, torch.bfloat16) == 0, (L, parents)


def test_negative_control_pytorchs_fused_attention_is_not_row_invariant():
    """Why the module exists: on this CPU, sdpa gives a 25-row chunk's rows other bits than one-token steps."""
    L, t = 300, 25
    q, k, v = _qkv(L, t, seed=1)
    assert _rows_differing(sdpa_attention_forward, q, k, v, L, list(range(-1, t - 2)), torch.bool) > 0


def test_a_fully_masked_row_stays_finite():
    q, k, v = _qkv(4, 2, seed=3)
    mask = torch.zeros(1, 1, 2, 6, dtype=torch.bool)                             # left padding: sees nothing
    assert torch.isfinite(row_invariant_attention(_Module, q, k, v, mask, 0.125)[0]).all()


def _speculate_against_plain(attention: str) -> tuple[int, int]:
    """(runs whose ids differ from plain greedy's, drafts kept) over 4 repetitive prompts x {lookup, suffix}, on a
    random tiny model in bfloat16 (near-ties everywhere) with the given attention."""
    t = tiny_llama(vocab_size=96, layers=2, hidden=64, seed=5, dtype=torch.bfloat16)
    t.model.set_attn_implementation(attention)
    rnd = random.Random(1)
    differ = kept = 0
    for _ in range(4):
        piece = [rnd.randrange(2, 96) for _ in range(12)]
        prompt = piece * 4 + [rnd.randrange(2, 96) for _ in range(5)] + piece[:3]
        cfg = DecodeConfig(k=8, max_new_tokens=48, record=False, stop_at_eos=False, sampling=SamplingConfig(0))
        plain, _ = run(t, None, prompt, cfg)
        for method in ("lookup", "suffix"):                                      # a chain, and trees
            s, steps = run(t, make_proposer(method, t), prompt, cfg)
            differ += not torch.equal(torch.tensor(s.token_ids), torch.tensor(plain.token_ids))
            assert any(st.n_drafted > 1 for st in steps)                          # multi-row verify passes
            kept += sum(st.n_accepted for st in steps)
    return differ, kept


def test_bfloat16_speculation_writes_plain_decodings_text_on_a_tiny_model():
    """Chains (lookup) and trees (suffix) emit plain greedy's ids, token for token, in bfloat16."""
    assert tiny_llama().model.config._attn_implementation == NAME                # what models are built with
    differ, kept = _speculate_against_plain(NAME)
    assert differ == 0 and kept >= 10                                             # rows past the first were used


def test_negative_control_with_fused_attention_a_bfloat16_run_parts_from_plain():
    differ, kept = _speculate_against_plain("sdpa")
    assert differ >= 1 and kept >= 10


def test_the_float64_cache_layer_holds_what_a_concatenation_would():
    """Appends, crops, the decoder's in-place compaction (engine/decode.py _keep) and growth past the buffer:
    keys/values always equal the float64 concatenation of what was kept, and are views of one buffer."""
    g = torch.Generator().manual_seed(0)
    layer, ref_k, ref_v = Float64Layer(), torch.zeros(1, 3, 0, 8, dtype=torch.float64), None
    ref_v = ref_k.clone()
    for step in range(90):
        t = 1 + step % 7
        k, v = (torch.randn(1, 3, t, 8, generator=g).to(torch.bfloat16) for _ in range(2))   # (1, Hkv, t, d)
        keys, values = layer.update(k, v)
        ref_k, ref_v = torch.cat([ref_k, k.double()], 2), torch.cat([ref_v, v.double()], 2)
        assert keys.dtype == torch.float64 and torch.equal(keys, ref_k) and torch.equal(values, ref_v)
        if step % 3 == 1:                          # keep rows 0 and 2 of the last t (as a tree's accepted path)
            start, rows = ref_k.shape[2] - t, [0, 2] if t > 2 else [0]
            for x, ref in ((layer.keys, ref_k), (layer.values, ref_v)):
                x[:, :, start:start + len(rows)] = x[:, :, torch.tensor(rows) + start]
                ref[:, :, start:start + len(rows)] = ref[:, :, torch.tensor(rows) + start]
            layer.crop(-(t - len(rows)))
            ref_k, ref_v = ref_k[:, :, :start + len(rows)], ref_v[:, :, :start + len(rows)]
            assert torch.equal(layer.keys, ref_k) and torch.equal(layer.values, ref_v)
        assert layer.get_seq_length() == ref_k.shape[2]
        assert layer.keys.data_ptr() == layer._k.data_ptr()                    # a view, not a copy
    assert ref_k.shape[2] > 256                                                # it outgrew its first buffer


def test_attention_over_the_float64_cache_equals_attention_over_bfloat16_keys():
    L, t = 300, 11
    q, k, v = _qkv(L, t, seed=7)
    mask = tree_pass_mask(list(range(-1, t - 2)), L, torch.bfloat16) == 0                    # a chain, bool
    a = row_invariant_attention(_Module, q, k, v, mask[None, None], 0.125)[0]
    b = row_invariant_attention(_Module, q, k.double(), v.double(), mask[None, None], 0.125)[0]
    assert a.dtype == torch.bfloat16 and torch.equal(a, b)


def test_a_prompt_on_an_empty_cache_runs_the_fused_kernel():
    """Every run shares its prefill, so the prefill may use sdpa; it does, bit for bit."""
    q, k, v = _qkv(0, 40, seed=2)
    assert torch.equal(row_invariant_attention(_Module, q, k, v, None, 0.125)[0],
                       sdpa_attention_forward(_Module, q, k, v, None, scaling=0.125)[0])


def test_decoders_cache_is_the_float64_one_under_this_attention():
    t = tiny_llama()
    assert isinstance(Decoder(t, None, [1, 2, 3], DecodeConfig(k=1)).cache, RowCache)


class _Oracle(Proposer):
    """Drafts a known continuation, so every drafted row is accepted and emitted."""
    name, deterministic = "oracle", True

    def __init__(self, ids: list[int]):
        self.ids = ids

    def propose(self, ctx, k: int) -> Draft:
        n = len(ctx.ids)
        return Draft(tokens=torch.tensor(self.ids[n:n + k], dtype=torch.long))   # (<=k,)


def test_a_one_token_prompt_verify_pass_keeps_the_row_invariant_path():
    """With a one-token prompt the first verify pass meets an empty cache; it must not take the prefill's fused
    kernel (the decoder passes its chain as a tree), or its rows would differ from plain's one-token steps."""
    t = tiny_llama(vocab_size=96, layers=2, hidden=64, seed=5, dtype=torch.bfloat16)
    cfg = DecodeConfig(k=6, max_new_tokens=8, record=False, stop_at_eos=False, sampling=SamplingConfig(0))
    for first in range(2, 10):
        s, plain = run(t, None, [first], cfg)
        _, spec = run(t, _Oracle([first] + s.token_ids), [first], cfg)
        assert spec[0].n_accepted == 6                                           # a 7-row pass on an empty cache
        top = [[x for st in steps for x in st.logit_top1] for steps in (plain, spec)]   # the emitted rows' logits
        assert top[0] == top[1], first                                           # bit for bit


class _Compute32(_Module):
    specviz_compute = torch.float32


def _in_float32(module, *a, **kw):
    return row_invariant_attention(_Compute32, *a, **kw)


@pytest.mark.parametrize("L", [1, 99, 316])
def test_float32_rows_equal_the_step_with_the_float64_attention(L):
    """--dtype auto may choose float32 (engine/autodtype.py): there too every row of a verify pass equals the
    one-token step with the float64 attention, while PyTorch's fused kernel (negative control) gives rows other
    last bits."""
    q, k, v = (x.float() for x in _qkv(L, 11, seed=L))
    chain = list(range(-1, 9))
    assert _rows_differing(row_invariant_attention, q, k, v, L, chain, torch.bool) == 0
    assert _rows_differing(sdpa_attention_forward, q, k, v, L, chain, torch.bool) > 0


def test_float32_alone_is_not_row_invariant():
    """The same attention computed in float32 gives some rows other last bits than the one-token step, so float32
    needs the float64 attention too. Where depends on the CPU's kernels: on a 2-core AVX2 EPYC every size differed;
    on an AVX512/AMX Xeon the short caches (1 and 7 keys) differ and 33 keys and more happen to agree."""
    differing = {}
    for L in (1, 7, 99, 316):
        q, k, v = (x.float() for x in _qkv(L, 11, seed=L))
        differing[L] = _rows_differing(_in_float32, q, k, v, L, list(range(-1, 9)), torch.bool)
    assert any(n > 0 for n in differing.values()), differing
