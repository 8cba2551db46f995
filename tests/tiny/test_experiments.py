"""Measured comparisons and sweeps: structure on tiny models, recommendations from given numbers,
and (slow) the workload effect on the real default model."""
import dataclasses

import pytest

from specviz.bench import results as BR
from specviz.core.records import RunSummary
from specviz.core.repetition import repetition
from specviz.core.sampling import SamplingConfig
from specviz.engine import comparisons as E, measure, sessions as SE, sweeps as SW
from specviz.engine.models import load_tokenizer, tiny_llama
from specviz.engine.workloads import COPY, NOVEL, get, of_kind
from specviz.teach import checkpoints as CK


def summary(tpp: float, tps: float, acc=None, ids=()) -> RunSummary:
    return RunSummary(method="m", text="", token_ids=list(ids), prompt_tokens=1, target_passes=10, drafted=10,
                      accepted=5, draft_acceptance_rate=acc, tested=8, alpha=5 / 8, tokens_per_pass=tpp,
                      per_position_acceptance=[],
                      wall_s=1.0, tokens_per_s=tps, prefill_s=0.1, draft_s=0.0, verify_s=0.9, mean_k=1.0)


def made(workload, kind, method, k, s: RunSummary, plain_tps: float, repeat: int = 0) -> E.Run:
    """A comparison's run known by its method and k, beside a plain run of plain_tps tokens/s in the same repeat."""
    plain = dataclasses.replace(s, method="plain", tokens_per_s=plain_tps)
    return E.Run(workload, kind, E.setting_of(method, k, None), repeat, measure.Repeat(s, [], plain, []))


def run(workload, kind, method, k, tpp, tps, plain_tps=10.0):
    return made(workload, kind, method, k, summary(tpp, tps), plain_tps)


def test_repetition_counts_repeated_ngrams():
    assert repetition([1, 2, 3, 4, 5, 6]) == 0.0
    assert repetition([1, 2, 3, 4] * 3) == pytest.approx(5 / 9)
    assert repetition([1, 2]) == 0.0


def test_recommend_picks_the_fastest_per_kind():
    runs = [run("a", COPY, "plain", 0, 1.0, 10), run("a", COPY, "lookup", 3, 2.5, 20),
            run("a", COPY, "lookup", 6, 3.0, 24),
            run("a", COPY, "draft", 3, 1.6, 12), run("b", NOVEL, "plain", 0, 1.0, 10),
            run("b", NOVEL, "lookup", 3, 1.05, 9.5), run("b", NOVEL, "draft", 3, 1.7, 13)]
    rec = E.recommend(runs)
    assert (rec[COPY].method, rec[COPY].k) == ("lookup", 6) and rec[COPY].speedup == pytest.approx(2.4)
    assert (rec[NOVEL].method, rec[NOVEL].k) == ("draft", 3) and rec[NOVEL].speedup == pytest.approx(1.3)
    assert f"**{runs[2].label}**" in rec[COPY].text() and runs[2].label == "lookup k=6 n=3"


def test_recommend_keeps_speculation_off_when_nothing_pays():
    slow = [run("b", NOVEL, "plain", 0, 1.0, 10), run("b", NOVEL, "lookup", 3, 1.02, 9.0)]
    assert E.recommend(slow)[NOVEL].method == "plain"
    # faster by timing noise but with no pass saved: not a real win
    noise = [run("b", NOVEL, "plain", 0, 1.0, 10), run("b", NOVEL, "lookup", 3, 1.0, 14.0)]
    r = E.recommend(noise)[NOVEL]
    assert r.method == "plain" and "noise" in r.text()


def test_recommend_uses_the_median_across_workloads():
    runs = [run(w, COPY, "lookup", 4, 2.0, s) for w, s in (("a", 30), ("b", 12), ("c", 11))]
    runs += [run(w, COPY, "draft", 4, 1.5, s) for w, s in (("a", 14), ("b", 14), ("c", 14))]
    rec = E.recommend(runs)[COPY]
    assert rec.method == "draft" and rec.speedup == pytest.approx(1.4) and rec.workloads == 3


@pytest.fixture(scope="module")
def tiny():
    tok = load_tokenizer()
    t = tiny_llama(vocab_size=len(tok), seed=0, max_positions=2048)
    d = tiny_llama(vocab_size=len(tok), seed=1, max_positions=2048)
    t.tokenizer = d.tokenizer = tok
    return t, d


def test_compare_runs_every_method_against_the_same_repeats_plain(tiny):
    t, d = tiny
    seen = []
    ws = [of_kind(COPY)[0], of_kind(NOVEL)[0]]
    runs = E.compare(t, ws, ["plain", "lookup", "draft"], [1, 3], max_new_tokens=5, drafter=d, repeats=2,
                     progress=lambda f, s: seen.append(f))
    # per workload and repeat: one plain run shared by lookup (its match rule: once, at its cap), draft k=1, k=3
    assert [(r.method, r.k, r.repeat) for r in runs[:4]] == [("plain", 0, 0), ("lookup", 24, 0),
                                                              ("draft", 1, 0), ("draft", 3, 0)]
    assert len(runs) == 2 * 2 * 4 and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)
    assert E.compare_runs(2, ["plain", "lookup", "draft"], [1, 3], 2).timed == len(runs)
    fixed = E.compare_settings(["lookup", "suffix"], [1, 3], k_rule="fixed")
    assert fixed == [("lookup", 1), ("lookup", 3), ("suffix", 24)]
    for r in runs:
        assert len(r.summary.token_ids) == 5
        plain = next(p for p in runs if p.method == "plain" and p.workload == r.workload and p.repeat == r.repeat)
        assert r.plain is plain.summary                         # that repeat's own plain run
        assert r.summary.token_ids == plain.summary.token_ids  # greedy, float32: plain's tokens
    assert all(r.summary.tokens_per_pass == 1.0 for r in runs if r.method == "plain")
    rows = E.table(runs)
    assert all(r["speedup"] == pytest.approx(1.0) and r["repeats"] == 2 for r in rows if r["method"] == "plain")
    assert {(r["workload"], r["method"], r["k"]) for r in rows} >= {(ws[0].name, "draft", 3),
                                                                    (ws[1].name, "lookup", 24)}


def test_table_divides_by_the_same_repeats_plain_then_takes_the_median():
    # plain ran at 10 then 20 tokens/s (a quiet then a busy minute); lookup at 15 then 20, k=2 at 30, 10, 40
    runs = [made("a", COPY, "plain", 0, summary(1.0, p), p, i) for i, p in enumerate([10.0, 20.0])]
    runs += [made("a", COPY, "lookup", 4, summary(2.0, x), p, i)
             for i, (x, p) in enumerate([(15.0, 10.0), (20.0, 20.0)])]
    runs += [made("b", COPY, "lookup", 2, summary(2.0, x), 10.0, i) for i, x in enumerate([30.0, 10.0, 40.0])]
    rows = {(r["workload"], r["method"]): r for r in E.table(runs)}
    # ratios 1.5 and 1.0: their median 1.25 (not 20 / 15 = 1.33, the ratio of the median tokens/s)
    a = rows[("a", "lookup")]
    assert a["speedup"] == pytest.approx(1.25) and a["spread"] == pytest.approx(0.5)
    assert rows[("b", "lookup")]["speedup"] == pytest.approx(3.0) and rows[("b", "lookup")]["repeats"] == 3
    assert rows[("a", "plain")]["speedup"] == pytest.approx(1.0)


def test_sweep_covers_the_grid_against_the_same_repeats_plain(tiny):
    t, _ = tiny
    pts, plains = SW.sweep(t, get("csv-to-json"), "lookup", [1, 2], [1, 3], max_new_tokens=4)
    assert [(p.k, p.n) for p in pts] == [(1, 1), (1, 3), (2, 1), (2, 3)] and len(plains) == 1
    for p in pts:  # greedy, float32: every point writes plain's tokens; its speedup was measured
        assert p.summary.token_ids == plains[0].token_ids and p.speedup > 0
    with pytest.raises(E.InputError):
        SW.sweep(t, get("csv-to-json"), "lookup", [0], [1])
    with pytest.raises(E.InputError):
        SW.sweep(t, get("csv-to-json"), "plain", [1], None)


def test_checkpoint_swap_reports_the_loaders_own_warning(tiny, monkeypatch, tmp_path):
    """Heads saved for the tiny base (its fingerprint on the card) load silently on it and warn, through
    the real loader, on a fine-tune of another checkpoint; both runs still happen."""
    from saved_heads import save_medusa_for

    from specviz.engine import artifacts

    t, _ = tiny
    tuned = tiny_llama(vocab_size=t.vocab_size, seed=5, max_positions=2048)
    tuned.tokenizer = t.tokenizer
    save_medusa_for(t, tmp_path)
    monkeypatch.setattr(artifacts, "MODELS_DIR", tmp_path)  # where the loader looks, not what it says
    rows, notes = CK.checkpoint_swap(t, tuned, get("csv-to-json"), ["medusa"], k=2, max_new_tokens=4)
    assert [(r["target"], r["method"]) for r in rows] == [("base", "plain"), ("base", "medusa"),
                                                        ("fine-tuned", "plain"), ("fine-tuned", "medusa")]
    assert list(notes) == ["medusa on the fine-tuned target"]
    note = notes["medusa on the fine-tuned target"]
    assert note.startswith("warned: the medusa artifact was trained for another checkpoint"), note


def test_bench_rows_flatten_a_results_file(tmp_path):
    import json
    import os

    row = {"tokens_per_pass": 3.1, "draft_acceptance_rate": 0.8, "tokens_per_s": 50.0, "tokens": 71.0}
    data = {"meta": {"workloads": {"csv-to-json": COPY}, "max_new_tokens": 128, "repeats": 3, "seeds": [1, 2],
                     "temperature": 0.8},
            "chosen": [{"mode": "greedy", "kind": COPY, "method": "lookup", "setting": "match rule, k≤24"}],
            "per_run": {"greedy": {"lookup": {"csv-to-json": row}}, "sampled": {"lookup": {"csv-to-json": row}}},
            "speedup": {"greedy": {"per_workload": {"lookup": {"csv-to-json": 2.5}}}}}
    # every row names its experiment: decoding mode (with T), the setting run, tokens, repeats or seeds
    assert BR.bench_rows(data) == [
        {"mode": "greedy", "method": "lookup", "workload": "csv-to-json", "kind": COPY, "setting": "match rule, k≤24",
         "max_new_tokens": 128, "runs": "3 repeats", **row, "speedup": 2.5},
        {"mode": "sampled T=0.8", "method": "lookup", "workload": "csv-to-json", "kind": COPY, "setting": "–",
         "max_new_tokens": 128, "runs": "2 seeds", **row, "speedup": None}]
    assert BR.bench_rows([1, 2]) == [] and BR.bench_rows({"format": 1}) == []
    (tmp_path / "bench").mkdir()
    assert BR.latest_bench(str(tmp_path)) is None
    (tmp_path / "bench" / "results.json").write_text(json.dumps(data))
    path, got = BR.latest_bench(str(tmp_path))
    assert os.path.basename(path) == "results.json" and got == data


def test_swap_verdict_states_the_measured_direction():
    rows = [{"target": t, "method": m, "tokens_per_pass": tpp, "draft_acceptance_rate": a}
            for t, m, tpp, a in [("base", "plain", 1.0, None), ("base", "medusa", 1.8, 0.4),
                                 ("base", "lookup", 2.0, 0.7),
                                 ("fine-tuned", "plain", 1.0, None), ("fine-tuned", "medusa", 1.2, 0.1),
                                 ("fine-tuned", "lookup", 2.02, 0.7)]]
    medusa, lookup = CK.swap_verdict(rows)
    assert medusa.startswith("medusa: τ 1.80 on the base → 1.20") and "dropped" in medusa and "40% → 10%" in medusa
    assert lookup.startswith("lookup:") and "held" in lookup
    assert "75% of its gain over plain lost" in medusa          # 1 - (1.2 - 1) / (1.8 - 1)
    rose = CK.swap_verdict([{"target": t, "method": "lookup", "tokens_per_pass": tpp, "draft_acceptance_rate": 0.5}
                           for t, tpp in (("base", 2.29), ("fine-tuned", 4.0))])[0]
    assert "rose" in rose and "grew by 133%" in rose and "-" not in rose.split("(")[1]   # not "−133 % lost"
    assert CK.gain_lost(2.0, 2.02) == pytest.approx(-0.02) and CK.gain_lost(1.0, 1.5) != CK.gain_lost(1.0, 1.5)  # nan


def test_bench_rows_read_the_committed_results_file():
    """The Compare page reads bench/results.json as the bench writes it (workloads as [name, kind] pairs)."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "results.json"
    assert path.exists(), "bench/results.json ships with the repository"
    rows = BR.bench_rows(json.loads(path.read_text()))
    assert rows and all(r["kind"] in (COPY, NOVEL) for r in rows)


def test_sessions_are_several_requests_revisiting_one_text():
    from specviz.engine.workloads import SESSION, SESSIONS, get_session
    assert len(SESSIONS) >= 3
    for s in SESSIONS:
        assert s.kind == SESSION and len(s.requests) >= 4 and get_session(s.name) is s
        prompts = [w.prompt for w in s.requests]
        assert len(set(prompts)) == len(prompts)                      # each request asks something else
        for a, b in zip(prompts, prompts[1:]):                        # ... about material they share
            assert len(set(a.split()) & set(b.split())) >= 10
    with pytest.raises(KeyError, match="unknown session"):
        get_session("nope")


def test_a_session_runs_its_requests_in_order_with_the_cache_on_and_off(tiny):
    """Two identical requests: with the cache on, the second drafts from the first's output; off, it cannot.
    Plain decoding runs every request of every repeat; greedy float32 output is plain's either way."""
    from specviz.engine import methods as M
    from specviz.engine.workloads import Session
    t, _ = tiny
    w = get("csv-to-json")
    sess = Session("twice", "session", "the same request twice", (w, w))
    cfg = SE.session_config(24, SamplingConfig(), 12)
    make = lambda: M.make_proposer("suffix", t)  # noqa: E731
    got, plains = SE.session_against_plain(t, sess, {"on": (make, cfg, True), "off": (make, cfg, False),
                                                    "lookup": (lambda: M.make_proposer("lookup", t), cfg, True)},
                                          SE.session_config(1, SamplingConfig(), 12), repeats=2)
    assert len(plains) == 2 and all(len(p.requests) == 2 and p.method == "plain" for p in plains)
    for m in got.values():
        assert len(m.runs) == 2 and m.same_as_plain == [True, True] and len(m.request_speedups()) == 2
        assert m.runs[0].total.tokens == 24 and m.speedup > 0 and m.row()["tokens_per_pass"] >= 1.0
        for r, p, got_ratio in zip(m.runs, plains, m.ratios):   # whole-session tokens/s ÷ plain's, by hand
            per_s = lambda run: sum(len(x.token_ids) for x in run.requests) / sum(x.wall_s for x in run.requests)  # noqa: E731
            assert got_ratio == pytest.approx(per_s(r) / per_s(p))
        assert m.identical and m.typical_run in m.runs
    seen = lambda run: {o for st in run.steps[1] for o in (st.seen_in or [])}  # noqa: E731
    assert any("request 1" in o for o in seen(got["on"].runs[0]))
    assert not any("request" in o for o in seen(got["off"].runs[0]))
    assert got["on"].runs[0].requests[1].target_passes < got["off"].runs[0].requests[1].target_passes
    assert SE.session_runs(2, 3, repeats=2).timed == 2 * 4 * 2


def test_every_comparison_row_is_labelled_by_the_settings_its_run_had(tiny):
    """A row's label is rendered from the Setting read off the proposer and DecodeConfig that ran (issue 34): a
    run's k or lookup's n changed, its label changes; the chart and the table print that label."""
    from dataclasses import replace

    from specviz.viz import compare as V

    t, d = tiny
    runs = E.compare(t, [of_kind(COPY)[0]], ["plain", "lookup", "draft"], [1, 3], n=3, max_new_tokens=4, drafter=d)
    rows = E.table(runs)
    for row in rows:
        [r] = [r for r in runs if (r.workload, r.method, r.k) == (row["workload"], row["method"], row.get("k") or 0)]
        assert row["setting"] == r.label == r.setting.describe(short=True)
        assert (r.setting.method, r.setting.k if r.method != "plain" else 0) == (r.method, r.k)
    labels = [row["setting"] for row in rows]
    assert labels == ["plain", "lookup n=3 ≤24", "draft k=1", "draft k=3"]     # lookup: the n it was given
    assert {x for tr in V.summary_bars(rows).data for x in tr.x} == set(labels)
    draft = next(r for r in runs if r.method == "draft" and r.k == 3)
    moved = replace(draft, setting=replace(draft.setting, k=5))
    assert moved.label == "draft k=5" != draft.label
    assert [row["setting"] for row in E.table([moved])] == ["draft k=5"]


def test_sweep_points_carry_the_settings_their_plan_names(tiny):
    """What a sweep's guess names (its plan's settings) is what each point ran with, for lookup's k × n grid,
    recycle's tree sizes and a suffix knob."""
    from specviz.teach.predict import sweep_plan

    t, _ = tiny
    w = get("csv-to-json")
    pts, _ = SW.sweep(t, w, "lookup", [1, 2], [1, 3], max_new_tokens=3)
    assert [p.setting for p in pts] == list(sweep_plan("lookup", w.name, [1, 2], [1, 3], 0.0, 3).settings)
    assert [p.setting.describe(short=True) for p in pts] == ["lookup k=1 n=1", "lookup k=1 n=3", "lookup k=2 n=1",
                                                             "lookup k=2 n=3"]
    pts, _ = SW.sweep(t, w, "recycle", [4, 8], None, max_new_tokens=3)
    assert [p.setting for p in pts] == SW.sweep_settings("recycle", [4, 8], None)
    assert [p.setting.describe(short=True) for p in pts] == ["recycle ≤24, nodes 4", "recycle ≤24, nodes 8"]
    for knob, values in (("max_depth", [8, 24]), ("factor", [1.0, 2.0])):
        pts, _ = SW.suffix_sweep(t, w, [2], knob, values, max_new_tokens=3)
        assert [p.setting for p in pts] == list(sweep_plan("suffix", w.name, [2], None, 0.0, 3, knob, values).settings)
        assert len({p.setting.describe(short=True) for p in pts}) == 2
