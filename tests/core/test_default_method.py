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
