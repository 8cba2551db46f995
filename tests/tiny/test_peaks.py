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


def test_the_cpu_copy_leaves_the_last_level_cache(tmp_path):
    from specviz.engine.peaks import CPU_COPY_MIB, last_cache_mib, sizes
    for i, size in enumerate(("48K", "2048K", "307200K")):                 # L1, L2, a 300 MiB L3 (sysfs's format)
        (tmp_path / f"index{i}").mkdir()
        (tmp_path / f"index{i}" / "size").write_text(size + "\n")
    assert last_cache_mib(str(tmp_path)) == 300
    (tmp_path / "index3").mkdir()
    (tmp_path / "index3" / "size").write_text("1G\n")
    assert last_cache_mib(str(tmp_path)) == 1024
    assert last_cache_mib(str(tmp_path / "none")) == 0
    mib = sizes(torch.device("cpu"))[0]
    assert mib >= CPU_COPY_MIB and mib >= last_cache_mib()
