"""The server-wide run cache (engine/runcache.py): bounded by entries and bytes (least recently used out first),
on disk too, keyed by the code's version, and a bad file on disk dropped, never served. No model needed."""
from specviz.core import recording as R
from specviz.core.records import StepRecord, summarize
from specviz.engine import runcache
from specviz.engine.runcache import RunCache, run_key


def rec(n_steps: int, tag: int = 0) -> R.Recording:
    steps = [StepRecord(index=i, k=1, context_len=3 + i, drafted=[], decisions=[], draws=[], ratios=[],
                        n_accepted=0, next_token=7 + tag, next_origin="bonus", emitted=[7 + tag], draft_s=0.0,
                        verify_s=0.01, logit_top1=[1.0], logit_gap=[0.1]) for i in range(n_steps)]
    s = summarize("plain", "x", [7 + tag] * n_steps, 3, steps, 0.1, 0.01)
    return R.Recording("step", {"tag": tag}, {"name": "m", "fingerprint": "f"}, {"code": "c"}, 1.7e9,
                       [R.RecordedRun({}, s, steps)], prompt_ids=[1, 2, 3])


def key(i: int) -> str:
    return run_key("fp", "float32", "cpu", {"seed": i}, [1, 2, 3])


def test_key_names_everything_that_decides_the_run():
    base = run_key("fp", "float32", "cpu", {"seed": 1}, [1, 2, 3])
    assert base == run_key("fp", "float32", "cpu", {"seed": 1}, [1, 2, 3])
    others = [run_key("fq", "float32", "cpu", {"seed": 1}, [1, 2, 3]),
              run_key("fp", "bfloat16", "cpu", {"seed": 1}, [1, 2, 3]),
              run_key("fp", "float32", "cuda", {"seed": 1}, [1, 2, 3]),
              run_key("fp", "float32", "cpu", {"seed": 2}, [1, 2, 3]),
              run_key("fp", "float32", "cpu", {"seed": 1}, [1, 2, 4])]
    assert base not in others and len(set(others)) == len(others)


def test_code_version_is_in_the_key(monkeypatch):
    a = key(1)
    monkeypatch.setattr(runcache, "code_version", lambda: "another0version0")
    assert key(1) != a and key(1).startswith("another0version0-")


def test_lru_by_entries():
    c = RunCache(max_entries=2)
    c.put(key(1), rec(2, 1))
    c.put(key(2), rec(2, 2))
    assert c.get(key(1)) is not None          # 1 is now the most recently used
    c.put(key(3), rec(2, 3))
    assert c.get(key(2)) is None and c.get(key(1)) is not None and c.get(key(3)) is not None


def test_bounded_by_bytes():
    one = len(R.dumps(rec(40)))
    c = RunCache(max_bytes=int(2.5 * one))
    for i in range(5):
        c.put(key(i), rec(40, i))
    assert len(c) == 2 and c.bytes <= 2.5 * one and c.get(key(4)) is not None and c.get(key(0)) is None


def test_off_stores_nothing():
    c = RunCache(enabled=False)
    c.put(key(1), rec(2))
    assert c.get(key(1)) is None and len(c) == 0


def test_disk_survives_a_new_process_and_drops_a_bad_file(tmp_path):
    RunCache(folder=tmp_path).put(key(1), rec(3, 1))
    fresh = RunCache(folder=tmp_path)           # as a restarted server: nothing in memory
    got = fresh.get(key(1))
    assert got is not None and got.runs[0].summary.token_ids == [8, 8, 8]
    path = tmp_path / f"{key(1)}.json"
    path.write_text(path.read_text().replace('"emitted":[8]', '"emitted":[9]', 1))   # tampered on disk
    assert RunCache(folder=tmp_path).get(key(1)) is None and not path.exists()


def test_disk_bounded_and_other_versions_removed(tmp_path):
    size = len(R.dumps(rec(30)))
    c = RunCache(folder=tmp_path, max_disk_bytes=int(2.5 * size))
    stale = tmp_path / "0000000000000000-old.json"
    stale.write_text("{}")
    for i in range(4):
        c.put(key(i), rec(30, i))
    names = {p.name for p in tmp_path.glob("*.json")}
    assert stale.name not in names and len(names) == 2 and f"{key(3)}.json" in names
