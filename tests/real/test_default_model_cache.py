"""The default model from its unpacked copy (engine/modelcache.py) is the GGUF's model: the same weights in float32
and in bfloat16, the same config, generation config and tokenizer. Each side is loaded here, the GGUF directly."""
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from specviz.engine import modelcache
from specviz.engine.models import default_gguf, default_unpacked, load_model, unpacked_gguf

pytestmark = pytest.mark.slow

TEXTS = ["Hello, world!", "  indented\n\tcode = {'a': 1}  # ünïcödé — 東京 🙂", "<|im_start|>user\nhi<|im_end|>"]


@pytest.fixture(scope="module")
def first_load(tmp_path_factory):
    """load_model("default") with an empty cache root of this module's own: it unpacks the GGUF and keeps a copy."""
    root = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(modelcache.CACHE_ENV, str(root))
        loaded = load_model("default", dtype="float32")
    folders = list((root / "models").iterdir())
    assert len(folders) == 1 and modelcache.is_complete(folders[0])
    return folders[0], loaded


@pytest.fixture(scope="module")
def kept(first_load):
    return first_load[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_the_kept_model_is_the_gguf_model_weight_for_weight(kept, dtype):
    folder, gguf = default_gguf()
    direct = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=dtype, **unpacked_gguf())
    back = modelcache.load_model(kept, dtype)
    want, got = direct.state_dict(), back.state_dict()
    assert sorted(want) == sorted(got)
    assert [k for k in want if not torch.equal(want[k], got[k])] == []
    assert back.lm_head.weight.data_ptr() == back.model.embed_tokens.weight.data_ptr()
    a, b = direct.config.to_dict(), back.config.to_dict()
    assert {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} <= {"_name_or_path"}
    assert direct.generation_config.to_dict() == back.generation_config.to_dict()


def test_the_kept_tokenizer_is_the_gguf_tokenizer(kept):
    folder, gguf = default_gguf()
    direct, back = AutoTokenizer.from_pretrained(folder, gguf_file=gguf), modelcache.load_tokenizer(kept)
    assert direct.get_vocab() == back.get_vocab() and direct.chat_template == back.chat_template
    assert [direct.encode(t) for t in TEXTS] == [back.encode(t) for t in TEXTS]
    msgs = [{"role": "user", "content": TEXTS[1]}]
    assert (direct.apply_chat_template(msgs, add_generation_prompt=True)
            == back.apply_chat_template(msgs, add_generation_prompt=True))
    assert ((direct.bos_token, direct.eos_token, direct.pad_token)
            == (back.bos_token, back.eos_token, back.pad_token))


def test_load_model_reads_the_copy_it_wrote_and_does_not_write_it_again(first_load, monkeypatch):
    folder, loaded = first_load
    monkeypatch.setenv(modelcache.CACHE_ENV, str(folder.parent.parent / "elsewhere"))
    assert not default_unpacked()                                          # what the sidebar reads while loading
    monkeypatch.setenv(modelcache.CACHE_ENV, str(folder.parent.parent))
    assert default_unpacked()
    stamp = (folder / modelcache.WEIGHTS).stat().st_mtime_ns
    again = load_model("default", dtype="float32", tokenizer=False)
    assert (folder / modelcache.WEIGHTS).stat().st_mtime_ns == stamp
    assert again.model.config._name_or_path == str(folder)                # read from the copy, not the GGUF
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]
    assert again.fingerprint() == loaded.fingerprint()
    assert torch.equal(again.model.lm_head.weight, loaded.model.lm_head.weight)
