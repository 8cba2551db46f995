"""--dtype auto (engine/autodtype.py): timed once per machine and target, remembered, a forced dtype kept.

The choice itself is tested on injected times (tests/core/test_dtypechoice.py); here the timing runs for real
on tiny models (only its shape is checked, never its speed) and the cache on a temporary path.
"""
import json

import pytest
import torch

from specviz import runtime
from specviz.core.dtypechoice import ShapeTimes
from specviz.engine import autodtype as A
from specviz.engine.models import tiny_llama

AVX2 = {"bfloat16": ShapeTimes(step=0.040, chain=0.20, tree=0.50, prefill=2.7),
        "float32": ShapeTimes(step=0.068, chain=0.12, tree=0.177, prefill=0.4)}


def tiny(name, device, dtype, tokenizer=True):
    return tiny_llama(vocab_size=64, layers=2, hidden=32, seed=0, dtype=getattr(torch, dtype), max_positions=512)


class Timer:
    """A stand-in for time_shapes that returns fixed times and counts its calls."""

    def __init__(self, times):
        self.times, self.calls = times, []

    def __call__(self, models):
        self.calls.append(sorted(models))
        return {dt: self.times[dt] for dt in models}


def calm(work):
    """busy_during on a quiet machine: nobody else kept a core busy."""
    return work(), 0.0


def test_the_shapes_are_timed_through_the_decode_loop_in_each_dtype():
    models = {dt: tiny("t", "cpu", dt) for dt in ("float32", "bfloat16")}
    got = A.time_shapes(models, rounds=1, steps=2)
    assert set(got) == {"float32", "bfloat16"}
    for t in got.values():
        assert all(getattr(t, s) > 0 for s in ("step", "chain", "tree", "prefill"))


def test_measured_once_then_read_back(tmp_path):
    path, timer = tmp_path / "dtype.json", Timer(AVX2)
    m = A.load_auto("t", "cpu", "speculative", tokenizer=False, path=path, loader=tiny, measure=timer, busy=calm)
    assert timer.calls == [["bfloat16", "float32"]]                   # each candidate loaded and timed once
    assert m.dtype == torch.float32 and "verify of 25 rows costs 12.5× one row here" in m.dtype_reason
    assert "timed now" in m.dtype_reason
    saved = json.loads(path.read_text())
    (key, entry), = saved.items()
    cap = torch.backends.cpu.get_cpu_capability()
    assert json.loads(key)["target"] == "t" and entry["machine"]["capability"] == cap
    assert entry["times"]["bfloat16"]["tree"] == 0.50
    assert isinstance(entry["load1"], float) and "load average" in m.dtype_reason   # the conditions it was timed in
    again = A.load_auto("t", "cpu", "plain", tokenizer=False, path=path, loader=tiny, measure=timer, busy=calm)
    assert len(timer.calls) == 1                                      # read back, not timed again
    assert again.dtype == torch.bfloat16 and "remembered in" in again.dtype_reason   # plain: the faster step
    assert f"at load average {entry['load1']:.1f}" in again.dtype_reason             # ... and said again when read


def test_another_machine_or_target_is_timed_anew(tmp_path, monkeypatch):
    path, timer = tmp_path / "dtype.json", Timer(AVX2)
    A.load_auto("t", "cpu", tokenizer=False, path=path, loader=tiny, measure=timer, busy=calm)
    A.load_auto("u", "cpu", tokenizer=False, path=path, loader=tiny, measure=timer, busy=calm)
    monkeypatch.setattr(runtime, "threads_ceiling", lambda: 64)
    A.load_auto("t", "cpu", tokenizer=False, path=path, loader=tiny, measure=timer, busy=calm)
    assert len(timer.calls) == 3 and len(json.loads(path.read_text())) == 3


def test_a_timing_taken_before_the_linears_were_packed_is_not_read_back(monkeypatch):
    """The cache key names which dtypes run packed (engine/packed.PACKS): packing float32 on an AVX2 CPU made
    its passes cheaper, so a float32-against-bfloat16 choice timed before it must be timed again."""
    from specviz.engine import packed
    keys = {}
    for packs in ((), (torch.bfloat16,), (torch.float32,), (torch.bfloat16, torch.float32)):
        monkeypatch.setattr(packed, "PACKS", packs)
        keys[packs] = json.loads(A.machine_key(torch.device("cpu"), "t"))["linears"]
    assert keys == {(): "aten", (torch.bfloat16,): "onednn-packed", (torch.float32,): "onednn-packed-float32",
                    (torch.bfloat16, torch.float32): "onednn-packed-bfloat16-float32"}


def test_an_unreadable_cache_is_timed_again_and_rewritten(tmp_path):
    path, timer = tmp_path / "dtype.json", Timer(AVX2)
    path.write_text("{not json")
    A.load_auto("t", "cpu", tokenizer=False, path=path, loader=tiny, measure=timer, busy=calm)
    assert len(timer.calls) == 1 and len(json.loads(path.read_text())) == 1


def test_the_running_dtypes_times_go_with_the_model(tmp_path, monkeypatch):
    """Auto's timing of the dtype it chose rides on the model (LoadedModel.v_wide: a pass of 1 + 24 rows in one-token
    steps, what the registry's lookup reads its sole rule from); a dtype asked for by name gets the timing auto
    remembered for it on this machine, or none."""
    path, timer = tmp_path / "dtype.json", Timer(AVX2)
    m = A.load_auto("t", "cpu", tokenizer=False, path=path, loader=tiny, measure=timer, busy=calm)
    assert m.dtype == torch.float32 and m.v_wide() == pytest.approx(0.177 / 0.068)
    monkeypatch.setattr(A, "load_model", tiny)
    assert A.load("t", "cpu", "bfloat16", tokenizer=False, path=path).v_wide() == pytest.approx(0.50 / 0.040)
    assert A.load("t", "cpu", "bfloat16", tokenizer=False, path=tmp_path / "none.json").v_wide() is None
    assert A.load("u", "cpu", "bfloat16", tokenizer=False, path=path).v_wide() is None     # another target


def test_a_forced_dtype_wins(monkeypatch):
    monkeypatch.setattr(A, "load_model", tiny)
    monkeypatch.setattr(A, "load_auto", lambda *a, **k: pytest.fail("auto ran for a forced dtype"))
    m = A.load("t", "cpu", "bfloat16", "speculative", tokenizer=False)
    assert m.dtype == torch.bfloat16 and m.dtype_reason == "bfloat16: asked for by name"


def test_the_cache_lives_outside_the_repository(monkeypatch, tmp_path):
    monkeypatch.setenv(A.CACHE_ENV, str(tmp_path))
    assert A.cache_path() == tmp_path / "dtype.json"
    monkeypatch.delenv(A.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert A.cache_path() == tmp_path / "xdg" / "specviz" / "dtype.json"


def test_a_timing_taken_under_load_is_used_then_timed_again_when_quiet(tmp_path, monkeypatch):
    path, timer = tmp_path / "dtype.json", Timer(AVX2)
    loaded = lambda work: (work(), 1.4)                               # noqa: E731 (another process: 1.4 cores)
    kw = dict(tokenizer=False, path=path, loader=tiny, measure=timer)
    m = A.load_auto("t", "cpu", busy=loaded, **kw)
    assert "other work kept 1.4 of" in m.dtype_reason and "provisional" in m.dtype_reason
    assert "(1 of 3)" in m.dtype_reason
    A.load_auto("t", "cpu", busy=loaded, quiet=lambda: False, **kw)   # still busy now: the provisional one is used
    assert len(timer.calls) == 1
    m = A.load_auto("t", "cpu", busy=calm, quiet=lambda: True, **kw)  # quiet now: timed again, and settled
    assert len(timer.calls) == 2 and "provisional" not in m.dtype_reason
    (entry,) = json.loads(path.read_text()).values()
    assert entry["others_busy"] == 0.0 and entry["tries"] == 2
    A.load_auto("t", "cpu", busy=calm, quiet=lambda: True, **kw)      # settled: read back from now on
    assert len(timer.calls) == 2
    monkeypatch.setenv(A.RETIME_ENV, "1")                             # ... unless asked to time again
    A.load_auto("t", "cpu", busy=calm, quiet=lambda: False, **kw)
    assert len(timer.calls) == 3


def test_a_machine_that_stays_busy_keeps_its_third_timing(tmp_path):
    path, timer = tmp_path / "dtype.json", Timer(AVX2)
    loaded = lambda work: (work(), 0.9)                               # noqa: E731
    kw = dict(tokenizer=False, path=path, loader=tiny, measure=timer, busy=loaded, quiet=lambda: True)
    for _ in range(5):
        m = A.load_auto("t", "cpu", **kw)
    assert len(timer.calls) == 3 and "timed 3 times, kept" in m.dtype_reason


def test_busy_during_reads_the_rest_of_the_machine():
    out, busy = A.busy_during(lambda: 7)
    assert out == 7 and (busy is None or 0.0 <= busy <= runtime.default_cpus())
