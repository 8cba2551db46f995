"""engine/modelcache.py on a tiny random model: what is kept loads back weight for weight, a damaged folder is
removed and written again, two writers leave one whole folder, and the switch turns it off."""
import pytest
import torch

from specviz.engine import modelcache
from specviz.engine.models import tiny_llama


def fresh_model():
    """A plain tiny Llama, unpacked and unpacked only (tiny_llama packs its linears for decoding; the cache keeps a
    model as it comes out of from_pretrained)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(3)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture
def source(tmp_path):
    f = tmp_path / "weights.gguf"
    f.write_bytes(b"pretend GGUF bytes")
    return f


def test_what_is_kept_loads_back_weight_for_weight_in_each_dtype(tmp_path, source):
    folder = modelcache.folder_for(source, root=tmp_path / "cache")
    model = fresh_model()
    assert modelcache.load_model(folder, torch.float32) is None          # nothing kept yet
    assert modelcache.save(folder, model, None, source=str(source))
    assert modelcache.is_complete(folder)
    for dt in (torch.float32, torch.bfloat16):
        back = modelcache.load_model(folder, dt)
        want, got = model.to(dt).state_dict(), back.state_dict()
        assert sorted(want) == sorted(got)
        assert all(torch.equal(want[k], got[k]) for k in want)
        assert back.model.embed_tokens.weight.data_ptr() == back.lm_head.weight.data_ptr()   # still tied
        model = model.float()
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]   # no temporary folder left behind


def test_the_folder_is_named_by_the_source_bytes(tmp_path, source):
    a = modelcache.folder_for(source, root=tmp_path)
    source.write_bytes(b"other GGUF bytes!")
    b = modelcache.folder_for(source, root=tmp_path)
    assert a != b and a.parent == b.parent
    assert modelcache.folder_for(tmp_path / "missing.gguf", root=tmp_path) is None


def test_a_damaged_folder_is_removed_and_written_again(tmp_path, source):
    folder = modelcache.folder_for(source, root=tmp_path)
    model = fresh_model()
    assert modelcache.save(folder, model, None)
    weights = folder / modelcache.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:1000])                   # cut short, as a full disk would
    assert modelcache.load_model(folder, torch.float32) is None
    assert not folder.exists()
    assert modelcache.save(folder, model, None)
    assert modelcache.load_model(folder, torch.float32) is not None


def test_a_second_writer_leaves_the_first_folder_whole(tmp_path, source):
    folder = modelcache.folder_for(source, root=tmp_path)
    assert modelcache.save(folder, fresh_model(), None)
    before = (folder / modelcache.WEIGHTS).read_bytes()
    assert not modelcache.save(folder, tiny_llama(vocab_size=64, hidden=32).model, None)
    assert (folder / modelcache.WEIGHTS).read_bytes() == before
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]


def test_an_unwritable_cache_is_no_error(tmp_path, source):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache root's folder would go")
    folder = modelcache.folder_for(source, root=blocker)
    assert not modelcache.save(folder, fresh_model(), None)
    assert modelcache.load_model(folder, torch.float32) is None


def test_the_switch_turns_it_off(tmp_path, source, monkeypatch):
    monkeypatch.setenv(modelcache.SWITCH_ENV, "off")
    assert modelcache.folder_for(source, root=tmp_path) is None
    assert modelcache.load_model(None, torch.float32) is None and not modelcache.save(None, fresh_model(), None)
    monkeypatch.setenv(modelcache.SWITCH_ENV, "on")
    assert modelcache.folder_for(source, root=tmp_path) is not None


def test_the_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(modelcache.CACHE_ENV, str(tmp_path / "x"))
    assert modelcache.cache_root() == tmp_path / "x"
    monkeypatch.delenv(modelcache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert modelcache.cache_root() == tmp_path / "xdg" / "specviz"


def test_a_failing_write_is_no_error_and_leaves_nothing(tmp_path, source, monkeypatch):
    def refuse(*a, **k):
        raise RuntimeError("safetensors refused")
    monkeypatch.setattr(modelcache, "save_model", refuse)
    folder = modelcache.folder_for(source, root=tmp_path)
    assert not modelcache.save(folder, fresh_model(), None)
    assert list(folder.parent.iterdir()) == []
