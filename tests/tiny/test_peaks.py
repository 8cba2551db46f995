"""engine/peaks.bytes_per_token against the bytes a real decode cache holds, on a tiny model in both dtypes."""
import pytest
import torch

from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import as_dtype, tiny_llama
from specviz.engine.peaks import bytes_per_token


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bytes_per_token_are_the_weights_plus_the_kv_the_decoder_really_keeps(dtype):
    t = tiny_llama(max_positions=256, seed=0)
    t = t if dtype == "float32" else as_dtype(t, dtype)
    prompt = torch.arange(1, 41) % t.vocab_size                                    # (40,)
    d = Decoder(t, None, prompt, DecodeConfig(k=1, max_new_tokens=4, record=False, stop_at_eos=False))
    d.prefill()
    kv = sum(x.numel() * x.element_size() for layer in d.cache.layers for x in (layer.keys, layer.values))
    n = d.cache.get_seq_length()                                                   # the prompt's entries kept
    assert n > 30 and bytes_per_token(t, n) == t.param_bytes() + kv                # the cache's own dtype (float64)
    assert kv > n * t.kv_bytes_per_token()                                        # more than the weights' dtype says
