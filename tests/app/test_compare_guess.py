"""Compare proposers, guess first: which method runs fastest, asked with the experiment the comparison then runs,
scored against that run's own table (teach/predict.fastest_method); without a guess the comparison still runs."""
from apptools import ok, page

from specviz.engine import comparisons as E
from specviz.teach import predict as P


def test_the_fastest_method_guess_names_the_run_and_is_scored_against_its_table():
    at = page("compare")
    at.multiselect(key="cmp_methods").set_value(["lookup", "draft"])
    at.multiselect(key="cmp_ks").set_value([2])
    at.radio(key="cmp_mode").set_value("greedy")
    ok(at.run())
    radio = at.radio(key="cmp_fast_guess")
    assert list(radio.options) == ["lookup", "draft", P.NONE_WINS]
    assert "lookup" in radio.label and "draft k = 2" in radio.label and "greedy" in radio.label
    radio.set_value("draft")
    ok(at.button(key="cmp_run").click().run())
    truth = P.fastest_method(E.table(at.session_state["cmp_result"]["runs"]))
    scored = [m.value for m in [*at.success, *at.info] if "You guessed" in m.value]
    assert len(scored) == 1 and "draft k = 2" in scored[0]            # scored against the experiment it named
    assert scored[0].startswith("✓") == (truth == "draft")


def test_the_fastest_rule_takes_each_methods_best_k_and_says_when_nothing_beats_plain():
    rows = [{"method": "plain", "k": None, "speedup": 1.0},
            {"method": "lookup", "k": 24, "speedup": 1.3}, {"method": "lookup", "k": 24, "speedup": 1.1},
            {"method": "draft", "k": 2, "speedup": 0.9}, {"method": "draft", "k": 4, "speedup": 1.4},
            {"method": "draft", "k": 4, "speedup": 0.9}]
    assert P.fastest_method(rows) == "lookup"          # lookup's median 1.2 against draft's best (k = 4) 1.15
    rows[-1]["speedup"] = 1.2                          # draft k = 4: median 1.3 > lookup's 1.2
    assert P.fastest_method(rows) == "draft"
    slow = [dict(r, speedup=min(r["speedup"], 0.95)) for r in rows]
    assert P.fastest_method(slow) == P.NONE_WINS
