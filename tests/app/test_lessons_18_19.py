"""AppTest for lessons 18 and 19 (lessons.md): token recycling on Trees (guess τ on a novel prompt, run, score,
then the table filling over a session; a tree size of 0 is one st.error) and block verification on Derivations
(the toy example by hand, guess which verifier keeps more, run both ways at the same seeds, score; a bad seed is
one st.error). Test-sized mode: a tiny random target with the real tokenizer."""
import os

os.environ.setdefault("SPECVIZ_TINY", "1")

from specviz.proposers.recycle import TREE_NODES  # noqa: E402
from tests.app.apptools import ok, page  # noqa: E402
from tests.app.test_app_part1 import errors, figures, metrics, text  # noqa: E402


def scored(at) -> list[str]:
    return [x.value for x in [*at.success, *at.info] if "You guessed" in x.value or "Your guess" in x.value]


def test_trees_recycling_guess_run_score_session_and_a_bad_tree_size():
    at = page("trees")
    ok(at.button(key="rc_tau_run").click().run())
    assert "rc_out" not in at.session_state                                    # no guess: nothing run
    at.number_input(key="rc_tau_guess").set_value(1.3)
    ok(at.button(key="rc_tau_run").click().run())
    out = at.session_state["rc_out"]
    s, steps = out["summary"], out["steps"]
    assert s.method == "recycle" and steps and out["nodes"] == TREE_NODES
    said = scored(at)
    assert said and "greedy" in said[0]
    assert f"Scored against: recycle (a static tree of up to {TREE_NODES} nodes" in said[0]
    assert f"{s.tokens_per_pass:.3g}" in said[0]                              # scored against the run's own τ
    assert metrics(at)["Table rows at the end"] == str(steps[-1].table_rows)
    assert steps[0].table_rows > 0                                             # the prefill's rows came first
    ok(at.button(key="rc_session_run").click().run())
    got = at.session_state["rc_session"]
    rows = got["rows"]
    assert [r.request for r in rows][0] == "story" and len({r.request for r in rows}) == 4
    sizes = [r.table_rows for r in rows]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]                     # kept across requests: it only grows
    fig = [f for f in figures(at) if "adjacency table over a session" in f["layout"]["title"]["text"]][0]
    assert fig["data"][0]["y"] == sizes
    fresh, both = got["fresh_rows"], got["both"]                              # off: a fresh table per request
    firsts = [next(r.table_rows for r in fresh if r.request == b["request"]) for b in both]
    assert firsts == [b["rows at its first pass, fresh"] for b in both]
    assert all(0 < n <= 16 for n in firsts)                                    # only its own prompt's last 16 rows
    assert [b["request"] for b in both] == [t["request"] for t in got["table"]]
    assert all(b["rows at its first pass, kept"] > b["rows at its first pass, fresh"] for b in both[1:])
    assert [b["τ, table kept"] for b in both] == [t["tokens per pass τ"] for t in got["table"]]
    fresh_fig = [f for f in figures(at) if "a fresh table per request" in f["layout"]["title"]["text"]][0]
    assert fresh_fig["data"][0]["y"] == [r.table_rows for r in fresh]
    at.number_input(key="rc_nodes").set_value(0).run()                         # bad input: one clear line
    errs = errors(at)
    assert len(errs) == 1 and "between 1 and 64 nodes, got 0" in errs[0]


def test_derivations_block_toy_by_hand_guess_run_score_and_a_bad_seed():
    at = page("derivations")
    assert "11/9" in text(at) and "10/9" in text(at)                           # the toy example by hand
    table = next(d.value for d in at.dataframe if "block keeps" in d.value.columns)
    assert list(table["draft"]) == ["AA", "AB", "BA", "BB"]
    ok(at.button(key="bv_more_run").click().run())
    assert "bv_out" not in at.session_state
    at.radio(key="bv_more_guess").set_value("block verification")
    ok(at.button(key="bv_more_run").click().run())
    m = at.session_state["bv_out"]["m"]
    assert {r["verification"] for r in m.rows} == {"token-wise", "block"} and len(m.rows) == 4   # seeds 1, 2
    said = scored(at)
    assert said and "draft k = 4 verified token by token and as one block, sampled at T = 0.8" in said[0]
    assert "seeds 1 and 2" in said[0]
    truth = "block verification" if m.tau["block"] > m.tau["token"] else \
        "token-wise verification" if m.tau["block"] < m.tau["token"] else "the same"
    assert ("is what the measurement shows" in said[0]) == (truth == "block verification")
    assert truth in said[0]
    at.text_input(key="bv_seeds").input("1, x").run()                          # bad input: one clear line
    errs = errors(at)
    assert len(errs) == 1 and "'x' is not" in errs[0]
