"""Home's reason for the default method is rendered from the measurement (scripts/default_rule.py --out)."""
from specviz.engine.methods import DEFAULT_METHOD, REGISTRY
from specviz.teach import default_method as DM


def test_the_default_is_a_registered_method_and_its_measurement_is_kept_and_meets_the_rule():
    assert DEFAULT_METHOD in REGISTRY and not REGISTRY[DEFAULT_METHOD].trained
    data = DM.load()
    assert data is not None and data["met"] is True
    kinds = [k for m in data["modes"].values() for k in m["kinds"].values()]
    assert {"greedy", "sampled"} <= set(data["modes"]) and len(kinds) == 3     # copy-heavy, novel; novel sampled
    assert all(k["lowest"] >= DM.RULE and k["vs_best"] >= DM.RULE for k in kinds)
    for m in data["modes"].values():                # the per-kind figures are the workloads' medians
        for w in m["workloads"].values():
            assert len(w["copy-recycle"]) == data["repeats"]


def test_home_text_names_the_experiment_and_each_kind():
    data = {"command": "scripts/default_rule.py --repeats 5", "date": "2026-12-04 14:20 UTC", "machine": "cpu X",
            "load": [2.0, 2.1], "new_tokens": 128, "repeats": 5, "temperature": 0.8, "met": True,
            "modes": {"greedy": {"kinds": {"copy-heavy": {
                "median": {"copy-recycle": 2.5, "suffix": 2.6, "recycle": 1.4}, "best_part": "suffix",
                "vs_best": 2.5 / 2.6, "lowest": 2.0}}},
                      "sampled": {"kinds": {"novel": {"median": {"copy-recycle": 1.1, "suffix": 1.0, "recycle": 1.12},
                                                      "best_part": "recycle", "vs_best": 1.1 / 1.12,
                                                      "lowest": 0.97}}}}}
    text = DM.why(data)
    for bit in ("`copy-recycle`", "scripts/default_rule.py --repeats 5", "2026-12-04", "cpu X", "128 new tokens",
                "5 interleaved repeats", "copy-heavy, greedy: **2.50×** plain against suffix's 2.60×",
                "(**0.96×** its better part)", "novel, sampled at T = 0.8", "lowest workload 0.97× plain",
                "meets the rule"):
        assert bit in text, bit
    assert "does **not** meet" in DM.why({**data, "met": False})
    assert "not in this checkout" in DM.why(None)


def _bench(per_workload: dict) -> dict:
    """A bench results file's speedup section: {mode: {method: {workload: ×}}}, by_kind from the workloads' kinds."""
    from specviz.core.stats import median
    from specviz.engine.workloads import BY_NAME
    out = {}
    for mode, d in per_workload.items():
        by_kind = {m: {k: median([x for w, x in ws.items() if BY_NAME[w].kind == k])
                       for k in {BY_NAME[w].kind for w in ws}} for m, ws in d.items()}
        out[mode] = {"per_workload": d, "by_kind": by_kind}
    return {"speedup": out, "meta": {"machine": {"capability": "AVX2"}}}


GOOD = {"greedy": {"copy-recycle": {"story": 1.3, "csv-to-json": 2.0}, "suffix": {"story": 1.2, "csv-to-json": 2.0},
                   "recycle": {"story": 1.3, "csv-to-json": 1.2}, "lookup": {"story": 1.1, "csv-to-json": 1.9}},
        "sampled": {"copy-recycle": {"story": 1.0}, "suffix": {"story": 0.9}, "recycle": {"story": 0.96},
                    "lookup": {"story": 1.0}}}


def test_the_machine_kinds_bench_chooses_copy_recycle_only_where_it_keeps_the_rule():
    from specviz.bench.results import default_choice
    ok = default_choice(_bench(GOOD))
    assert ok["method"] == "copy-recycle" and ok["met"] and ok["lowest"]["copy-recycle"] == (1.0, "story", "sampled")
    # negative control: trees that cost more than they keep (a CPU without native bfloat16): below plain on story
    slow = {mode: {m: dict(ws) for m, ws in d.items()} for mode, d in GOOD.items()}
    slow["greedy"]["copy-recycle"]["story"] = 0.74
    bad = default_choice(_bench(slow))
    # never below 0.95x: lookup (lowest 1.0, median 1.1) and recycle (0.96, median 1.2): the faster median, recycle
    assert not bad["met"] and bad["safe"] == ["lookup", "recycle"] and bad["method"] == "recycle"
    assert bad["median"]["recycle"] == 1.2 and bad["lowest"]["suffix"] == (0.9, "story", "sampled")
    # where no method stays above the floor, the highest lowest workload: lookup's 0.94 (recycle 0.8, suffix 0.9)
    none = {mode: {m: dict(ws) for m, ws in d.items()} for mode, d in slow.items()}
    none["sampled"]["lookup"]["story"], none["sampled"]["recycle"]["story"] = 0.94, 0.8
    worst = default_choice(_bench(none))
    assert worst["safe"] == [] and worst["method"] == "lookup"
    # below its better part on a kind also fails the rule, though above plain everywhere
    part = {mode: {m: dict(ws) for m, ws in d.items()} for mode, d in GOOD.items()}
    part["greedy"]["suffix"]["csv-to-json"] = 2.4
    assert not default_choice(_bench(part))["met"]
    assert default_choice({"meta": {}}) is None


def test_the_default_reads_the_bench_of_this_machines_kind_only(tmp_path):
    import json

    from specviz.bench.results import default_method
    slow = {mode: {m: dict(ws) for m, ws in d.items()} for mode, d in GOOD.items()}
    slow["greedy"]["copy-recycle"]["story"] = 0.74
    slow["sampled"]["recycle"]["story"] = 0.9                     # below the floor: lookup is the only one above
    folder = tmp_path / "bench" / "results" / "cpu-avx2"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(_bench(slow)))
    avx2 = {"cpu": "X", "capability": "AVX2", "threads": 2, "torch": "2.13.0"}
    assert default_method(avx2, root=str(tmp_path)) == ("lookup", str(folder / "results.json"))
    assert default_method({**avx2, "capability": "AVX512"}, root=str(tmp_path)) == (DEFAULT_METHOD, None)


def test_home_says_what_this_machine_opens_on_from_its_kinds_bench():
    from specviz.bench.results import default_method
    from specviz.engine.device import machine
    here = machine("cpu")
    method, path = default_method(here)
    text = DM.on_this_machine(here)
    if path:                                           # a committed bench of this kind: its experiment is named
        assert f"open on `{method}`" in text
        assert "python -m specviz bench" in text and "lowest workload × plain" in text and "median" in text
    else:                                              # none: the registry's default, and how to measure one
        assert f"registry's default, `{method}`" in text and "no bench of its kind is committed" in text
    other = {**here, "capability": "NO-SUCH-KIND"}
    assert "no bench of its kind is committed" in DM.on_this_machine(other)


def test_home_names_only_the_phases_a_partial_bench_reached(tmp_path, monkeypatch):
    """A bench stopped before its sampled phase (complete: False, greedy rows only) is described as what ran: greedy
    repeats, no seeds, "partial"; a complete one names both phases."""
    import json

    from specviz.bench import results as BR
    avx2 = {"cpu": "X", "capability": "AVX2", "threads": 2, "torch": "2.13.0"}
    folder = tmp_path / "bench" / "results" / "cpu-avx2"
    folder.mkdir(parents=True)
    data = _bench({"greedy": GOOD["greedy"], "sampled": {}})       # the partial file keeps an empty sampled section
    data["meta"].update(complete=False, repeats=2, seeds=[1, 2], temperature=0.8, max_new_tokens=128)
    (folder / "results.json").write_text(json.dumps(data))
    real = BR.kind_bench
    monkeypatch.setattr(DM, "kind_bench", lambda here: real(here, str(tmp_path)))
    text = DM.on_this_machine(avx2)
    assert "**partial**" in text and "greedy only" in text and "seeds" not in text and "sampled" not in text
    data = _bench(GOOD)
    data["meta"].update(complete=True, repeats=2, seeds=[1, 2], temperature=0.8, max_new_tokens=128)
    (folder / "results.json").write_text(json.dumps(data))
    text = DM.on_this_machine(avx2)
    assert "partial" not in text and "2 seeds at T = 0.8" in text and "greedy and sampled" in text
