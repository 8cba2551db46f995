"""The number a page shows is the number it hands on (issue 34 §3): Compare hands the break-even calculator the
median speedup its table shows (not the last repeat's), and a self-sized or tree run fills the calculator with
what the chain law can take, never the error 'k must be between 1 and 16'."""
from apptools import ok, page

from specviz.engine import comparisons as E
from specviz.ui import state


def test_compare_hands_the_calculator_the_median_it_shows():
    at = page("compare")
    at.multiselect(key="cmp_methods").set_value(["lookup", "suffix"])
    at.multiselect(key="cmp_ks").set_value([2])
    at.radio(key="cmp_mode").set_value("greedy")
    at.number_input(key="cmp_repeats").set_value(3)
    ok(at.button(key="cmp_run").click().run())
    runs = at.session_state[state.COMPARISON]["runs"]
    rows = {(r["workload"], r["method"]): r for r in E.table(runs)}
    last = [r for r in runs if r.method == "lookup"][-1]
    shown = rows[(last.workload, "lookup")]["speedup"]
    entry = at.session_state["measured_runs"]["lookup"]
    assert entry["speedup"] == shown and entry["plain_steps"]                      # the median, with t₁'s steps
    ratios = sorted(r.speedup for r in runs if r.method == "lookup" and r.workload == last.workload)
    median_run = next(r for r in runs if r.method == "lookup" and r.workload == last.workload
                      and r.speedup == ratios[1])
    assert entry["summary"].tokens_per_s == median_run.summary.tokens_per_s          # the median repeat's run
    at.switch_page("pages/breakeven.py").run()
    for method, says in (("lookup", "sizes its own drafts"), ("suffix", "the chain law")):
        at.selectbox(key="bk_pick").set_value(method).run()
        ok(at.button(key="bk_fill_btn").click().run())
        assert not [e.value for e in at.error if "k must be between" in e.value]
        assert 1 <= at.number_input(key="bk_k").value <= 16
        assert any(says in i.value for i in at.info), [i.value for i in at.info]
    assert any("does not apply to it" in i.value and "τ = " in i.value for i in at.info)   # the tree's own figures


def test_a_recycle_run_fills_the_calculator_as_a_tree():
    """Token recycling drafts a tree: its τ, nodes per pass and c fill the calculator as a tree's do (its own
    figures, the tree note), never the chain law's α and k."""
    at = page("compare")
    at.multiselect(key="cmp_methods").set_value(["recycle"])
    at.radio(key="cmp_mode").set_value("greedy")
    at.number_input(key="cmp_repeats").set_value(1)
    ok(at.button(key="cmp_run").click().run())
    entry = at.session_state["measured_runs"]["recycle"]
    s = entry["summary"]
    at.switch_page("pages/breakeven.py").run()
    at.selectbox(key="bk_pick").set_value("recycle").run()
    k_before = at.number_input(key="bk_k").value
    ok(at.button(key="bk_fill_btn").click().run())
    note = [i.value for i in at.info if "recycle drafts a tree" in i.value]
    assert note and "does not apply to it" in note[0] and f"τ = {s.tokens_per_pass:.2f}" in note[0]
    assert f"k̄ = {s.mean_k:.1f} drafted nodes per pass" in note[0]
    assert at.number_input(key="bk_k").value == k_before                   # the chain law's k left alone
    assert any("recycle drafted trees" in w.value for w in at.warning)      # the tree's E[τ], not the chain law
    assert at.session_state["bk_filled"] == "recycle"
