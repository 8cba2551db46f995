"""The bench: its pure checks in milliseconds, `--quick` on a tiny random model, and (slow) on the real one.

The speed targets are what the bench reports, never asserted here: these tests only keep the bench
working and its checks honest (an equality failure must turn into a non-zero exit).
"""
import json

import pytest
from bench_outputs import check_outputs

from specviz.bench import report as bench_report
from specviz.bench.checks import compare_ids
from specviz.cli import main
from specviz.core.costmodel import cost_check


# -- pure ----------------------------------------------------------------------------------------------
def test_identical_ids_pass_in_any_dtype():
    for exact in (True, False):
        e = compare_ids("w", "m", "x", [5, 6, 7], [5, 6, 7], [30.0] * 3, [1.0] * 3, exact)
        assert e.identical and e.ok and e.position is None


def test_float32_difference_fails_even_at_a_tie():
    e = compare_ids("w", "m", "float32", [5, 9, 7], [5, 6, 7], [30.0] * 3, [0.0] * 3, exact=True)
    assert not e.ok and e.position == 1 and (e.method_token, e.plain_token) == (9, 6)


def test_bfloat16_difference_is_judged_by_the_plain_logits_at_the_first_difference():
    # near 30 one bf16 ulp is 0.125: a gap of 0.25 is a near-tie, 0.5 is not
    top1, gap = [30.0, 30.0, 30.0], [3.0, 0.25, 0.0]
    tie = compare_ids("w", "m", "bfloat16", [5, 9, 1], [5, 6, 7], top1, gap, exact=False)
    assert tie.ok and tie.near_tie and tie.position == 1 and tie.gap == 0.25
    gap[1] = 0.5
    bug = compare_ids("w", "m", "bfloat16", [5, 9, 1], [5, 6, 7], top1, gap, exact=False)
    assert not bug.ok and not bug.near_tie and "bug" in bug.note
    # the later tie at position 2 does not rescue a divergence at position 1
    assert not compare_ids("w", "m", "bfloat16", [5, 9, 7], [5, 6, 7], top1, gap, exact=False).ok


def test_an_early_stop_counts_as_a_difference():
    e = compare_ids("w", "m", "float32", [5, 6], [5, 6, 7], [30.0] * 3, [2.0] * 3, exact=True)
    assert not e.ok and e.position == 2 and e.method_token is None


def test_cost_check_uses_the_calculators_formulas():
    v = {1: 1.0, 2: 1.1, 4: 1.2, 8: 1.6}
    c = cost_check("w", "lookup", 3.0, 4.0, 0.0, v, measured=2.0, alpha=0.6)
    assert c.v == pytest.approx(1.2) and c.predicted == pytest.approx(2.5) and c.error == pytest.approx(0.25)
    assert c.tau_iid == pytest.approx((1 - 0.6 ** 5) / 0.4)       # E[tau](alpha) at k-bar
    assert cost_check("w", "m", 2.0, 3.0, 0.1, v, measured=1.0, alpha=None).predicted == \
        pytest.approx(2.0 / (1.15 + 0.3))                           # interpolated v(3)
    assert cost_check("w", "m", 2.0, 3.0, 0.1, v, measured=1.0, alpha=None).tau_iid is None
    assert c.error_decode is None  # no decode-only speedup given


def test_cost_check_prices_the_passes_it_is_given():
    """The bench hands the check v̄, the median over repeats of each one's mean v(kᵢ): the prediction and the
    end-to-end form both use it in place of v(k̄)."""
    v = {1: 1.4, 8: 1.8}
    at_mean = cost_check("w", "lookup", 3.0, 2.0, 0.0, v, measured=2.5, alpha=None)
    priced = cost_check("w", "lookup", 3.0, 2.0, 0.0, v, measured=2.5, alpha=None, v_bar=1.2, tokens=12,
                        prefill_s=0.0, t1=0.04)
    assert at_mean.v == pytest.approx(1.4 + 0.4 / 7) and priced.v == 1.2
    assert priced.predicted == pytest.approx(2.5) and priced.predicted_with_prefill == pytest.approx(2.5)
    assert at_mean.predicted < priced.predicted


def test_the_report_names_the_verify_term_its_results_were_computed_with():
    from pathlib import Path
    res = json.loads((Path(__file__).resolve().parents[2] / "bench/results/cpu-avx2/results.json").read_text())
    res["format"] = 1                                       # rows priced at one pass of the mean length
    old = bench_report.markdown(res)
    assert "| v(k̄) |" in old and "| v̄ |" not in old and "predate pricing each pass" in old
    res["format"] = 2
    new = bench_report.markdown(res)
    assert "| v̄ |" in new and "| v(k̄) |" not in new and "mean of v(kᵢ) over a run's passes" in new


def test_cost_check_puts_like_beside_like():
    """End to end: the prediction gets the measured prefill added; decode only: compared with the
    speedup that leaves both prefills out. Prefill shrinks an end-to-end speedup towards 1."""
    v = {1: 1.0, 4: 1.0}
    # tau 4, v 1, c 0: decode-only 4x. 100 tokens at t1 = 0.05 s plain = 5 s; prefill 1 s both sides:
    # end to end (1 + 5) / (1 + 1.25) = 2.667
    c = cost_check("w", "lookup", 4.0, 4.0, 0.0, v, measured=2.5, alpha=0.8, tokens=100, prefill_s=1.0,
                   t1=0.05, measured_decode=4.4)
    assert c.predicted == pytest.approx(4.0)
    assert c.predicted_with_prefill == pytest.approx(6.0 / 2.25)
    assert c.error == pytest.approx((6.0 / 2.25) / 2.5 - 1)      # the target compares end to end
    assert c.error_decode == pytest.approx(4.0 / 4.4 - 1)
    d = c.as_dict()
    assert d["error"] == pytest.approx(c.error) and d["error_decode"] == pytest.approx(c.error_decode)


def test_v_is_measured_through_the_decode_loop_on_a_tiny_model():

    from specviz.engine.models import tiny_llama
    from specviz.engine.passcost import RandomDraft, measure_v
    target = tiny_llama(vocab_size=50, layers=1, seed=0)
    v = measure_v(target, ks=(1, 3), context=20, repeats=2)
    assert set(v) == {1, 3} and all(x > 0 for x in v.values())
    d = RandomDraft(50, seed=1).propose(None, 5)
    assert d.tokens.shape == (5,) and d.q is None and int(d.tokens.max()) < 50


def _learned_results(sp_novel: dict, sp_copy: dict, sp_sampled: dict) -> dict:
    """A minimal results dict: per label, one novel and one copy-heavy workload."""
    def per_run(taus):
        return {lab: {w: dict(tokens_per_pass=t, mean_k=4.0, engine="specviz") for w in ("story", "csv")}
                for lab, t in taus.items()}
    labs = sp_novel.keys()
    by_kind = {lab: {"novel": sp_novel[lab], "copy-heavy": sp_copy[lab]} for lab in labs}
    return {"meta": {"workloads": [["story", "novel"], ["csv", "copy-heavy"]]},
            "per_run": {"greedy": per_run({lab: 2.0 for lab in labs}), "sampled": per_run({lab: 1.5 for lab in labs})},
            "speedup": {"greedy": {"by_kind": by_kind},
                        "sampled": {"by_kind": {lab: {"novel": sp_sampled[lab]} for lab in labs}}}}


def test_learned_targets_take_the_best_proposer_and_check_each_on_copy_heavy():
    res = _learned_results({"lookup": 3.0, "eagle": 1.3, "eagle-tree": 1.6, "medusa": 1.1},
                           {"lookup": 3.0, "eagle": 1.25, "eagle-tree": 1.1, "medusa": 1.0},
                           {"lookup": 1.0, "eagle": 1.21, "eagle-tree": 1.1, "medusa": 0.9})
    got = []
    bench_report.learned_targets(res, lambda name, v, thr, rule, note="": got.append((name, v, note)))
    by = {n: (v, note) for n, v, note in got}
    # lookup is not learned
    assert by["best learned proposer on novel workloads, × plain (greedy)"] == (1.6, "eagle-tree")
    assert by["best learned proposer on novel workloads, × plain (sampled)"] == (1.21, "eagle")
    assert {n for n in by if "copy-heavy" in n} == {f"{m} on copy-heavy workloads, × plain (greedy)"
                                                    for m in ("eagle", "eagle-tree", "medusa")}
    table = "\n".join(bench_report.learned_table(res))
    assert "| eagle-tree | 2.00 | 4.0 | 1.10 | 2.00 | 4.0 | 1.60 | 1.50 | 4.0 | 1.10 |" in table
    assert table.index("| lookup |") < table.index("| eagle |") < table.index("| eagle-tree |")


def test_needs_table_states_the_tau_and_alpha_a_learned_target_takes():
    res = _learned_results({"eagle": 1.28, "eagle-tree": 1.2}, {"eagle": 1.1, "eagle-tree": 1.0},
                           {"eagle": 1.1, "eagle-tree": 1.0})
    res["cost_model"] = [dict(method="eagle", kind="novel", workload="story", tau=1.63, k_bar=2.0, c=0.075,
                              v=1.17, alpha=0.45),
                         dict(method="eagle-tree", kind="novel", workload="story", tau=2.2, k_bar=12.0, c=0.03,
                              v=1.3, alpha=0.27)]
    table = "\n".join(bench_report.needs_table(res))
    # eagle: ceiling 1.63 / 1.17 = 1.39; needed 1.5 * (1.17 + 0.15) = 1.98; 1 + a + a^2 = 1.98 at a = 0.61
    assert "| eagle | novel | ≥ 1.5 | 1.28 | 1.63 | 2.0 | 1.17 | 0.15 | 1.39 | 1.98 | 0.45 | 0.61 |" in table
    assert "| eagle-tree | novel | ≥ 1.5 | 1.20 | 2.20 | 12.0 | 1.30 | 0.36 | 1.69 | 2.49 | 0.27 | – |" in table
    assert "copy-heavy" not in table.split("|---")[-1]           # no cost rows there, no row
    assert bench_report.needs_table({**res, "cost_model": []}) == []


def test_failing_equality_makes_the_bench_exit_nonzero(capsys):
    from specviz.bench.main import report_failures
    good = compare_ids("w", "lookup", "float32", [1, 2], [1, 2], [30.0] * 2, [1.0] * 2, True)
    bad = compare_ids("w", "lookup", "float32", [1, 3], [1, 2], [30.0] * 2, [1.0] * 2, True)
    assert report_failures([good]) == 0
    assert report_failures([good, bad]) == 1
    assert "EQUALITY FAILED" in capsys.readouterr().err


# -- the whole bench, test-sized ----------------------------------------------------------------------------
def test_quick_bench_on_a_tiny_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no --out: a quick run writes runs/bench-quick/, never the committed bench/
    rc = main(["bench", "--quick", "--target", "tiny", "--dtype", "float32"])
    assert rc == 0
    out = tmp_path / "runs" / "bench-quick"
    assert not (tmp_path / "bench").exists()
    res = check_outputs(out, "float32")
    assert "draft" in res["meta"]["methods"]  # the tiny drafter runs through the draft-model path
    # lookup's sole option as this machine set it (methods.lookup_sole), named beside the machine
    assert res["meta"]["sole_rule"].startswith("a 2-token match seen only once before drafts")
    assert f"lookup here: {res['meta']['sole_rule']}" in (out / "results.md").read_text()
    assert "hf assisted (drafter)" in res["speedup"]["greedy"]["per_workload"]
    # the untuned training-free methods (the registry's copy family: lookup, suffix, recycle, copy-recycle) on
    # plain's own text (the float32 pass): one row per method and workload, the same text
    from specviz.bench.plan import UNTUNED
    same = res["same_text"]
    assert {"lookup", "suffix"} <= set(UNTUNED)
    assert {(r["method"], r["workload"]) for r in same} == {(m, w) for m in UNTUNED
                                                            for w, _ in res["meta"]["workloads"]}
    assert all(r["identical"] and r["tau"] >= 1 and r["model_speedup"] > 0 for r in same)
    assert "Copying on the same text" in (out / "results.md").read_text()
    # token vs block verification: every sampled chain row beside its block twin, same seeds (issue 35 §2)
    from specviz.bench.plan import BLOCK_CHAINS
    sampled = res["per_run"]["sampled"]
    chains = [lab for lab in sampled if lab in BLOCK_CHAINS]
    assert "lookup" in chains and "draft" in chains
    assert all(lab + " (block)" in sampled for lab in chains)
    assert all(r["setting"].endswith(", block") for r in sampled["draft (block)"].values())
    rows = {r["method"]: r for r in res["block"]}
    assert set(rows) == set(chains) and all(r["tau_block"] >= 1 and r["speedup_block"] > 0 for r in rows.values())
    drafted = [r for r in rows.values() if r["kept_token_same_draws"] or r["kept_block"]]
    assert drafted and all(r["expected_block"] > 0 and r["expected_ratio"] == pytest.approx(
        r["expected_block"] / r["expected_token"], rel=1e-3) for r in drafted)   # the exact paired figure too
    assert "token-wise vs block verification" in (out / "results.md").read_text()
    # plain decoding against the memory limit measured at the start (issue 33 §5): the share is recomputed from the
    # JSON's own decode tokens/s, bandwidth and bytes per token, and the header says it
    roof, pr = res["meta"]["roof"], res["plain_roof"]
    assert roof["bandwidth"] > 0 and roof["bytes_per_token"] > 0
    assert set(pr["share"]) == {w for w, _ in res["meta"]["workloads"]}
    for w, x in pr["decode_tokens_per_s"].items():
        assert pr["share"][w] == pytest.approx(x * roof["bytes_per_token"] / roof["bandwidth"], rel=1e-3)
    assert "Memory limit:" in (out / "results.md").read_text()
    assert any(t["target"].startswith("§5 plain decoding") for t in res["targets"])
    before = (out / "results.md").read_text()
    bench_report.rebuild(str(out))  # markdown and html come from the JSON alone
    assert (out / "results.md").read_text() == before


def test_bad_bench_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["bench", "--workloads", "no-such-workload", "--out", str(tmp_path)]) == 2
    assert "unknown workload" in capsys.readouterr().err


def test_estimate_reproduces_the_previous_runs_timed_phases(capsys):
    """The estimator sums measured run times per planned run: on the previous run's own plan it must
    give back that run's measured greedy and sampled phase times (within 5%)."""
    from specviz.bench.estimate import reference, timed
    from specviz.bench.plan import Plan
    from specviz.engine import workloads as W

    ref = reference()
    meta = json.loads(open(ref["source"]).read())["meta"]
    old = Plan(workloads=list(W.WORKLOADS), repeats=meta["repeats"],
               ref_repeats=meta.get("ref_repeats", meta["repeats"]))
    copying = [m for m in ("lookup", "suffix") if m in meta["methods"]]
    trained = [m for m in meta["methods"] if m not in ("plain", *copying)]  # that run's own methods (trees too)
    per_run = json.loads(open(ref["source"]).read())["per_run"]
    refs = [lab for lab in per_run["greedy"] if lab.startswith("hf ") or lab == "lookup (recording off)"]  # its refs
    block = [lab.removesuffix(" (block)") for lab in per_run["sampled"] if lab.endswith(" (block)")]  # its block rows
    for mode in ("greedy", "sampled"):
        assert timed(old, ref, mode, trained, copying, refs, block) == pytest.approx(ref["phases"][mode], rel=0.05), \
            mode
    assert main(["bench", "--estimate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    minutes = {ln[:28].strip(): float(ln[28:].split()[0]) for ln in lines}
    total = minutes.pop("total")
    assert total == pytest.approx(sum(minutes.values()), abs=0.05 * len(minutes))  # printed to 0.1 min
    # today's plan keeps that run's repeats, seeds and lengths; it adds suffix rows and the session phase and
    # drops lookup's tuning grid (issue 23), so it is priced near, not at, that run's wall time
    assert (meta["repeats"], meta["seeds"], meta["max_new_tokens"], meta["tuning_tokens"]) == (3, [1, 2, 3], 128, 48)
    assert minutes["sessions"] > 0 and minutes["tuning"] < ref["phases"]["tuning"] / 60
    # and (issue 35) the block twins of the sampled chain rows: priced apart, the rest stays near that run
    from specviz.bench.plan import TRAINED_METHODS
    from specviz.engine import artifacts
    from specviz.engine.methods import REGISTRY
    today = Plan(workloads=list(W.WORKLOADS))
    shipped = [m for m in TRAINED_METHODS if artifacts.available()[REGISTRY[m].artifact]]
    twins = (timed(today, ref, "sampled", shipped) - timed(today, ref, "sampled", shipped, block=())) / 60
    assert twins > 0
    assert 0.9 < (total - twins) / (meta["wall_s"] / 60) < 1.3



def test_every_bench_rows_setting_is_what_its_run_is_given():
    """A bench row's setting is rendered from the Setting read off the proposer the bench builds and the
    DecodeConfig it runs (issue 34): the copying methods at their defaults and the drafter's tuning grid."""
    from specviz.bench import runs as BR
    from specviz.bench.main import load_env
    from specviz.bench.plan import UNTUNED, candidates
    from specviz.core.sampling import SamplingConfig
    from specviz.engine.experiment import Setting

    env, _ = load_env("tiny", "cpu", "float32")
    specs = [s for m in (*UNTUNED, "draft") for s in candidates(m)]
    assert len(specs) == len(UNTUNED) + 3
    for s in specs:
        ran = Setting.of(env.proposer(s.method, s.n), BR.specviz_config(s, 8, SamplingConfig(), 0))
        assert s.setting == ran.describe(short=True), s
    assert len({s.setting for s in specs}) == len(specs)       # the drafter's k=2, k=4 and adaptive rows differ


def test_training_free_targets_divide_the_rows_they_name():
    from specviz.engine.workloads import BY_NAME
    copy, novel = "summarise-passage", "story"
    assert BY_NAME[copy].kind == "copy-heavy" and BY_NAME[novel].kind == "novel"
    pw = {"recycle": {copy: 1.2, novel: 1.5}, "suffix": {copy: 2.0, novel: 1.3},
          "copy-recycle": {copy: 1.8, novel: 1.6}, "lookup": {copy: 2.2, novel: 1.2}, "hf lookup k=10": {copy: 2.0}}
    by_kind = {lab: {BY_NAME[w].kind: x for w, x in d.items()} for lab, d in pw.items()}
    out = {"speedup": {"greedy": {"per_workload": pw, "by_kind": by_kind},
                       "sampled": {"per_workload": {"copy-recycle": {novel: 0.9}, "recycle": {novel: 1.2}},
                                   "by_kind": {"copy-recycle": {"novel": 0.9}, "recycle": {"novel": 1.2}}}},
           "block": [dict(method="draft", kind="novel", tau_ratio=1.05, speedup_block=1.1, speedup_token=1.0,
                          kept_block=21, kept_token_same_draws=20),
                     dict(method="eagle", kind="novel", tau_ratio=0.97, speedup_block=1.1, speedup_token=1.0,
                          kept_block=21, kept_token_same_draws=20, expected_ratio=1.08)]}
    got = {}
    bench_report.training_free_targets(out, BY_NAME, lambda n, v, thr, rule, note="": got.update({n: (v, thr)}))
    assert got["issue 35: recycle on novel workloads, × plain (greedy, median over workloads)"] == (1.5, 1.4)
    assert got["issue 35: the default (copy-recycle) on every workload, × plain (the lowest, greedy and sampled)"] \
        == (0.9, 0.95)                                        # the sampled novel run is the lowest
    assert got["issue 35: the default (copy-recycle) ÷ the better of its parts, copy-heavy (greedy)"][0] \
        == pytest.approx(1.8 / 2.0)                           # suffix is the better part there
    assert got["issue 35: the default (copy-recycle) ÷ the better of its parts, novel (greedy)"][0] \
        == pytest.approx(1.6 / 1.5)                           # and recycle here
    assert got["issue 35: block ÷ token-wise, draft (novel, sampled): τ"] == (1.05, 1.03)   # results before the exact
    assert got["issue 35: block ÷ token-wise, eagle (novel, sampled): drafts kept in expectation on the same drafts"] \
        == (1.08, 1.03)
    assert got["issue 33: lookup ÷ hf lookup k=10 on copy-heavy workloads (greedy, median of per-workload ratios)"] \
        == (pytest.approx(1.1), 1.1)
    assert got["issue 33: copy-recycle ÷ hf lookup k=10 on copy-heavy workloads (greedy, median of per-workload "
               "ratios)"] == (pytest.approx(0.9), 1.1)
