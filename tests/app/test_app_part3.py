"""AppTest for the lessons added for active learning: Derivations, Serving reality (test-sized mode)."""
from apptools import ok, page


def texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_derivations_series_proof_and_distance():
    at = page("derivations")
    at.slider(key="der_alpha").set_value(0.5)
    ok(at.slider(key="der_k").set_value(3).run())
    assert "Sum: **1.875**" in texts(at)                       # 1 + .5 + .25 + .125
    proof = at.dataframe[1].value
    assert (proof["sum"] - proof["p(x)"]).abs().max() < 1e-4
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["1 − Σ min(p, q) (the lossless lab's p, q)"] == metrics["½ Σ |p − q|"]
    ok(at.button(key="der_run").click().run())                 # no guess: nothing runs
    assert "der_measured" not in at.session_state
    at.number_input(key="der_tau_guess").set_value(2.0)
    ok(at.button(key="der_run").click().run())
    m = at.session_state["der_measured"]
    assert m["tau"] >= 1.0
    scored = [x.value for x in at.success] + [x.value for x in at.info]
    assert any("Your guess 2" in v and f"{m['tau']:.3g}" in v for v in scored)
    # the guess named its run (method and rule, mode, k, tokens, workload), rendered from the plan that ran
    from specviz.teach import derivations as D
    said = next(v for v in scored if "Your guess 2" in v)
    assert D.plan_series(12).describe() in said and m["workload"] in said


def test_acceptance_as_servers_report_it_after_a_guess():
    import json

    at = page("derivations")
    at.selectbox(key="sv_method").set_value("draft")         # the tiny drafter: it always drafts
    ok(at.button(key="sv_run").click().run())                  # no guess: nothing runs
    assert "sv_view" not in at.session_state
    at.number_input(key="sv_zero_guess").set_value(0.5)
    ok(at.button(key="sv_run").click().run())
    _, _, v, said = at.session_state["sv_view"]
    assert any(said in c.value for c in at.caption)            # the caption names the run that was made
    assert v.num_drafts > 0
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Mean acceptance length"] == f"{v.mean_acceptance_length:.2f}"
    fig = next(json.loads(el.proto.spec) for el in at.get("plotly_chart") if "accepted length" in el.proto.spec)
    assert sum(fig["data"][0]["y"]) == v.num_drafts              # one bar count per drafting pass
    assert any("Mean acceptance length" in c.value for c in at.code)
    scored = [x.value for x in at.success] + [x.value for x in at.info]
    assert any("Your guess 0.5" in x for x in scored)
    assert "draft k = 4" in said and "greedy" in said           # the run names its own settings


def test_serving_reality_memory_batch_and_papers():
    at = page("serving_reality")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["KV per token: 70B target"] == "320 KiB" and metrics["KV per token: drafter"] == "32 KiB"
    assert metrics["sequences without → with the drafter"] == "14 → 11" and metrics["concurrent sequences lost"] == "3"
    ok(at.number_input(key="sr_mem").set_value(400.0).run())
    assert {m.label: m.value for m in at.metric}["concurrent sequences lost"] != "3"
    at.number_input(key="sr_vb_guess").set_value(1.0)
    ok(at.button(key="sr_vb_run").click().run())
    vb = at.session_state["sr_vb"]
    assert set(vb) == {1, 4, 16}
    scored = [x.value for x in at.success] + [x.value for x in at.info]
    assert any(v.startswith(("✓ Your guess 1", "✗ Your guess 1")) for v in scored)
    papers = at.table[0].value                             # st.table: long cells wrap instead of being cut off
    assert "Medusa" in papers.to_string() and "source" in papers.columns and "reported" in papers.columns
    assert {"Prompt lookup decoding (Saxena, 2023)", "Medusa-2 (Cai et al., 2024)", "EAGLE-2 (Li et al., 2024)",
            "EAGLE-3 (Li et al., 2025)"} <= set(papers.index) and all(papers["source"].str.len() > 0)
    ok(at.button(key="sr_mine_run").click().run())
    mine = at.dataframe[-1].value
    assert "this app" in mine.to_string()
    # every measured row names its experiment, rendered from the Experiment the button ran (the caption is its
    # describe()): the run's own setting, mode, tokens, repeats, and where it ran
    from specviz.teach.reality import app_experiment
    ex = app_experiment(8)
    assert any(ex.describe() in c.value for c in at.caption)
    assert set(mine["setting"].str.split("; ").str[1]) == set(ex.workloads)
    assert all((f"; {ex.settings[0].describe(short=True)}, greedy, 8 new tokens" in x and "of 3 repeats" in x
                and "Measured here:" in x) for x in mine["setting"])


def test_pitfalls_layer_skipping_is_measured_after_a_guess():
    at = page("pitfalls")
    ok(at.button(key="pit_ls_run").click().run())
    assert "pit_ls" not in at.session_state
    at.number_input(key="pit_ls_guess").set_value(50.0)
    ok(at.button(key="pit_ls_run").click().run())
    n_layers, agree, n_pos = at.session_state["pit_ls"]
    assert agree and all(0.0 <= a <= 1.0 for a in agree.values()) and max(agree) < n_layers and n_pos > 100
    scored = [x.value for x in at.success] + [x.value for x in at.info]
    assert any("Your guess 50" in v for v in scored)
    # break-even from the calculator beside the agreement: c priced from the model's parameters, k = 4, v = 1
    from specviz.core.costmodel import breakeven_alpha, truncation_cost
    from specviz.engine.models import tiny_llama
    from specviz.teach.families import layer_params
    lp = layer_params(tiny_llama(vocab_size=49152, layers=2, hidden=32).model)   # the shapes of the app's tiny:0
    table = at.dataframe[-1].value
    assert list(table["c (its layers + the output layer)"]) == [f"{truncation_cost(lp, n):.2f}" for n in agree]
    assert list(table["break-even α (k = 4, v = 1)"]) == [f"{breakeven_alpha(4, truncation_cost(lp, n), 1.0):.2f}"
                                                          for n in agree]
    md = " ".join(m.value for m in at.markdown)
    assert "well over half" not in md and "Draft & Verify" in md and "SWIFT" in md


def test_serving_reality_own_models_memory_after_a_guess():
    """Serving cost on this app's own pair: nothing measured before a guess; then the score names the pair, the
    budget and the context, and equals the share computed from the caches read on the loaded models."""
    from specviz.teach import reality as R

    at = page("serving_reality")
    ok(at.button(key="sr_own_run").click().run())              # no guess: nothing is measured
    assert "sr_own" not in at.session_state
    at.number_input(key="sr_own_guess").set_value(20.0)
    ok(at.button(key="sr_own_run").click().run())
    own = at.session_state["sr_own"]
    b = own["budget"]
    assert own["kv_target"] > 0 and own["kv_drafter"] > 0 and b.sequences_without > b.sequences_with
    assert own["lost_pct"] == 100 * b.lost / b.sequences_without
    said = next(x.value for x in [*at.success, *at.info] if "Your guess 20" in x.value)
    assert f"{own['lost_pct']:.3g}" in said
    assert "with its drafter (tiny:1)" in said and "160 GB, 4096 tokens per sequence" in said
    assert R.fit(own["weights_target"], own["kv_target"], own["weights_drafter"], own["kv_drafter"], 160.0,
                 4096) == b


def test_alpha_alpha_hat_and_tau_by_hand_from_a_dealt_table():
    """Derivations, servers tab: three steps of a live run as a table; the reveal waits for all three answers,
    then scores each against the table's own counts and maps them to vLLM's names."""
    from specviz.teach import predict as P

    at = page("derivations")
    at.selectbox(key="sv_method").set_value("draft")          # the tiny drafter: it always drafts
    ok(at.button(key="hand_deal").click().run())
    method, _, three, rows = at.session_state["hand"]
    shown = [d.value for d in at.dataframe if list(d.value.columns) == list(rows[0])]  # the dealt table (tab four)
    assert len(three) == 3 and len(shown) == 1 and len(shown[0]) == 3
    ok(at.button(key="hand_run").click().run())               # no answers: nothing revealed
    assert "hand_revealed" not in at.session_state
    at.number_input(key="hand_alpha_guess").set_value(0.5)
    at.number_input(key="hand_alpha_hat_guess").set_value(0.5)
    ok(at.button(key="hand_run").click().run())               # two of three: still nothing
    assert "hand_revealed" not in at.session_state
    at.number_input(key="hand_tau_guess").set_value(2.0)
    ok(at.button(key="hand_run").click().run())
    bh = P.by_hand(rows)
    scored = [x.value for x in [*at.success, *at.info]]
    for guess, truth in (("0.5", bh.alpha), ("0.5", bh.alpha_hat), ("2", bh.tau)):
        assert any(f"Your guess {guess}" in s and f"{truth:.3g}" in s for s in scored), (guess, truth, scored)
    assert all("(draft k = 4, greedy), counted from the table" in s for s in scored if "Your guess" in s)
    mapped, = [d.value for d in at.dataframe if "vLLM logs" in d.value.columns]   # the names table (tab four)
    assert list(mapped["vLLM logs"]) == ["–", "Avg Draft acceptance rate", "Mean acceptance length",
                                         "Per-position acceptance rate"]
    assert any(f"Mean acceptance length: {bh.tau:.2f}" in c.value for c in at.code)
