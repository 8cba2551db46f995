"""Training evaluation measures through engine/measure: same rule as the app and the bench."""
import statistics

import pytest

from specviz.engine.methods import make_proposer
from specviz.engine.models import load_tokenizer, tiny_llama
from specviz.engine.workloads import COPY, NOVEL, of_kind
from specviz.train import evaluate as EV


def test_evaluate_rows_and_table_follow_the_speedup_rule():
    tok = load_tokenizer()
    t = tiny_llama(vocab_size=len(tok), seed=0, max_positions=2048)
    t.tokenizer = tok
    ws = [of_kind(COPY)[0], of_kind(NOVEL)[0]]
    rows = EV.measure(t, {"plain": (None, 1), "lookup k=2": (lambda: make_proposer("lookup", t, n=2), 2)},
                      reps=3, max_new=6, workloads=ws)
    assert len(rows) == 2 * 2 * 3
    for r in rows:
        p = next(x for x in rows if x["method"] == "plain" and (x["workload"], x["rep"]) == (r["workload"], r["rep"]))
        assert r["ratio"] == pytest.approx(r["tps"] / p["tps"])
    tab = {(x["method"], x["kind"]): x for x in EV.table(rows)}
    for kind, w in ((COPY, ws[0]), (NOVEL, ws[1])):
        ratios = [r["ratio"] for r in rows if r["method"] == "lookup k=2" and r["workload"] == w.name]
        assert tab[("lookup k=2", kind)]["speedup"] == pytest.approx(statistics.median(ratios), abs=1e-3)
        assert tab[("plain", kind)]["speedup"] == 1.0 and tab[("plain", kind)]["alpha"] is None
    md = EV.markdown(EV.table(rows), "t")
    assert "α (kept ÷ tested)" in md and "α̂ (kept ÷ drafted)" in md
