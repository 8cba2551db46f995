"""AppTest for Home, Step through and the Break-even calculator, in test-sized mode (SPECVIZ_TINY=1:
a tiny random Llama with the real SmolLM2 tokenizer), plus the pure helpers those pages draw with.

Plotly figures are read back from the element proto's `spec` JSON (AppTest has no plotly accessor).
"""
import base64
import json
import os
import re
from pathlib import Path

os.environ["SPECVIZ_TINY"] = "1"  # before the app (and specviz.ui.loading) is imported

import pytest  # noqa: E402
import torch  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from specviz.core.records import StepRecord, TopTokens  # noqa: E402
from specviz.core.verify import residual  # noqa: E402
from specviz.viz import step as vz  # noqa: E402

APP = str(Path(__file__).resolve().parents[2] / "app.py")
OTHER = "another model (type its folder or id)"


# -- helpers -----------------------------------------------------------------------------------
def _values(v):
    if isinstance(v, dict) and "bdata" in v:  # plotly's typed-array encoding
        import numpy as np
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return v


def pq_figure(at) -> tuple[dict, list[str]]:
    """Step through's one p-vs-q figure and its panels' titles ("Position i: drafted …")."""
    pq = [(f, [a["text"] for a in f["layout"].get("annotations", []) if a.get("text", "").startswith("Position")])
          for f in figures(at)]
    pq = [x for x in pq if x[1]]
    assert len(pq) == 1
    return pq[0]


def figures(at) -> list[dict]:
    out = []
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        for tr in spec["data"]:
            for key in ("x", "y"):
                if key in tr:
                    tr[key] = _values(tr[key])
        out.append(spec)
    return out


def title(fig) -> str:
    t = fig["layout"].get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def errors(at) -> list[str]:
    assert not at.exception, [e.value for e in at.exception]
    return [e.value for e in at.error]


def text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [s.value for s in at.success] + [w.value for w in at.warning]
    return "\n".join(parts)


@pytest.fixture(scope="module")
def warm():
    """Load the tokenizer and the tiny models once for the module (later AppTests reuse them)."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/step_through.py").run()
    at.button(key="stp_one").click().run()
    errors(at)
    return True


def step_page(warm, **settings) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/step_through.py").run()
    for key, value in settings.items():
        widget = at.selectbox(key=key) if key in ("stp_method", "stp_drafter_pick", "stp_preset") else (
            at.text_input(key=key) if key == "stp_drafter_path" else
            at.checkbox(key=key) if key in ("stp_chat", "stp_adaptive") else
            at.text_area(key=key) if key == "stp_prompt" else at.number_input(key=key))
        widget.set_value(value)
        at.run()
    return at


def decoder(at):
    return at.session_state["stp"]["dec"]


# -- Home --------------------------------------------------------------------------------------
def test_home_links_every_page_and_says_what_loads(warm):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    errors(at)
    assert "speculative decoding" in at.title[0].value
    links = {p.proto.label for p in at.get("page_link")}
    assert {"Step through", "Break-even calculator", "Compare proposers", "Is it lossless?", "Derivations",
            "Serving reality"} <= links
    assert "cannot be used at all" not in text(at) and "use_heterogeneous_vocab" in text(at)
    assert "typical acceptance" in text(at)
    status = " ".join(x.value for x in list(at.success) + list(at.info))
    assert ("Target model loaded" in status) or ("Loading the target model" in status)
    assert "min(1, p(x) / q(x))" in text(at)
    from specviz.teach import default_method as DM  # why the default, from the kept measurement
    assert DM.why(DM.load()) in text(at) and "The registry's default method is `copy-recycle`" in text(at)
    assert DM.on_this_machine() in text(at)          # and what this machine opens on, from its kind's bench


# -- Step through ------------------------------------------------------------------------------
def test_one_lookup_step_draws_one_hot_q_and_same_argmax(warm):
    # n = 1: the chat prompt ends in a newline that occurs earlier, so lookup always drafts at step 1 (as many
    # tokens as its match rule says: k applies to the fixed-k methods)
    at = step_page(warm, stp_method="lookup", stp_n=1, stp_k=4)
    at.radio(key="stp_krule").set_value("fixed").run()          # k tokens per match (the default follows the match)
    at.button(key="stp_one").click().run()
    assert errors(at) == []
    rec = decoder(at).steps[0]
    assert rec.n_drafted >= 1 and rec.greedy
    m = metrics(at)
    assert m["Target passes"] == "1"
    assert m["Accepted / drafted"] == f"{rec.n_accepted} / {rec.n_drafted}"
    assert "same argmax" in text(at)
    fig, panels = pq_figure(at)
    assert len(panels) == len(rec.decisions)                 # one p-vs-q panel per tested position
    assert panels[0].startswith("Position 1: drafted")
    p_tr, q_tr = fig["data"]
    assert p_tr["name"].startswith("p (target, softmax at T=1)")
    # lookup's q is one-hot on the drafted token, which is the highlighted (▶) bar
    assert sorted(q_tr["y"]) == [0.0] * (len(q_tr["y"]) - 1) + [1.0]
    hot = q_tr["x"][q_tr["y"].index(1.0)]
    assert hot.startswith("<b>▶") and vz.token_label(decoder(at).target.tokenizer, rec.drafted[0]) in hot
    # the p bars are the record's T=1 softmax
    top = dict(zip(rec.p_top[0].ids, rec.p_top[0].probs))
    assert max(y for y in p_tr["y"] if y is not None) == pytest.approx(max(top.values()), rel=1e-6)


def test_play_to_end_tallies_colours_and_remembers(warm):
    at = step_page(warm, stp_method="lookup", stp_n=1, stp_new=12)
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    dec = decoder(at)
    assert dec.finished
    assert len(dec.new_tokens) == 12 or (dec.stopped_at_eos and len(dec.new_tokens) < 12)
    m = metrics(at)
    assert m["Target passes"] == str(len(dec.steps))
    assert m["Tokens generated"] == str(len(dec.new_tokens))
    assert m["Tokens per pass τ"] == f"{len(dec.new_tokens) / len(dec.steps):.2f}"
    html = next(x.value for x in at.markdown if x.value.startswith('<div style="white-space'))
    assert html.count("<span") == len(dec.new_tokens)       # one coloured span per generated token
    assert 'title="step 1 ·' in html
    passes = next(f for f in figures(at) if title(f).startswith("Tokens committed"))
    assert sum(sum(tr["y"]) for tr in passes["data"]) == len(dec.new_tokens)
    assert "lookup" in at.session_state["measured_runs"]


def test_pq_charts_four_at_a_time_with_a_slider_for_the_rest(warm):
    # the target drafting for itself with k = 6: six tested positions, their p-vs-q charts drawn SP.PQ_CHARTS at a time
    from specviz.ui import step_panels as SP
    at = step_page(warm, stp_method="draft", stp_drafter_pick=OTHER, stp_drafter_path="tiny:0", stp_k=6, stp_new=12)
    at.button(key="stp_one").click().run()
    assert errors(at) == []
    rec = decoder(at).steps[0]
    assert len(rec.decisions) == 6 > SP.PQ_CHARTS == 4

    def shown():  # the panels of the one p-vs-q figure, by their titles
        fig, panels = pq_figure(at)
        assert len(fig["data"]) == 2 * SP.PQ_CHARTS           # p and q bars for each panel
        return sorted(int(t.split()[1].rstrip(":")) for t in panels)
    assert shown() == [3, 4, 5, 6]                       # by default the last ones tested
    at.slider(key="stp_pq_from_0_6").set_value(1).run()
    assert errors(at) == [] and shown() == [1, 2, 3, 4]
    assert list(SP.pq_window(3, None)) == [0, 1, 2] and list(SP.pq_window(9, 99)) == [5, 6, 7, 8]


def test_self_draft_greedy_accepts_everything(warm):
    # the target drafting for itself: every guess is the target's own argmax
    at = step_page(warm, stp_method="draft", stp_drafter_pick=OTHER, stp_drafter_path="tiny:0",
                   stp_k=3, stp_new=12)
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    m = metrics(at)
    assert m["Draft acceptance rate α̂"] == "100%"
    assert m["Tokens per pass τ"] == "4.00"                  # 3 accepted + 1 bonus per pass
    assert "bonus" in text(at)
    # the anatomy of the shown pass, from its record: 4 inputs (root + 3 drafts), a 4 x 4 causal mask, caches measured
    rec = decoder(at).steps[at.slider(key="stp_show").value - 1]
    assert not any("query (fed position)" in el.proto.spec for el in at.get("plotly_chart"))  # closed until a guess
    at.button(key="stp_anat_run").click().run()                 # no guess: still closed
    assert not any("query (fed position)" in el.proto.spec for el in at.get("plotly_chart"))
    at.number_input(key="stp_anat_guess").set_value(3)
    at.button(key="stp_anat_run").click().run()
    assert errors(at) == []
    said = next(x.value for x in [*at.success, *at.info] if "Your guess 3" in x.value)
    assert f"is low: measured {rec.target_cache[2] - rec.target_cache[0]} " in said   # root + 3 kept = 4 stay
    assert f"step {rec.index + 1} of this draft run, greedy, k = 3, 3 drafted, 3 accepted" in said
    mask = next(json.loads(el.proto.spec) for el in at.get("plotly_chart") if "query (fed position)" in el.proto.spec)
    assert len(mask["data"][0]["z"]) == 4 and len(mask["data"][0]["z"][0]) == 4
    assert "fed 4 tokens in one pass: the root and the 3 drafts" in text(at)
    rows = at.dataframe[-1].value
    assert list(rows["this step"])[-1] == "the bonus token is drawn from this row"
    t0, t1, t2 = rec.target_cache
    assert f"**{t0}** entries before the pass → **{t1}** after it (+4" in text(at) and "drops nothing" in text(at)
    assert "Drafter: **" in text(at)                         # the draft model's own cache, measured
    other = 1 if at.slider(key="stp_show").value != 1 else 2   # another step: its pass is closed until a guess
    at.slider(key="stp_show").set_value(other).run()
    assert errors(at) == [] and not any("query (fed position)" in el.proto.spec for el in at.get("plotly_chart"))


def test_step_through_opens_on_the_default_method_with_a_copy_heavy_preset_and_labels_plain_tokens(warm):
    from specviz.bench.results import default_method
    from specviz.engine.device import machine
    from specviz.engine.methods import REGISTRY
    here = default_method(machine(None))[0]          # what this machine kind's committed bench picks
    at = step_page(warm)
    assert at.selectbox(key="stp_method").value == here and not REGISTRY[here].trained   # Home says why
    assert "copy-heavy" in at.selectbox(key="stp_preset").value
    at.button(key="stp_one").click().run()
    assert errors(at) == [] and decoder(at).proposer.name == here
    at.selectbox(key="stp_method").set_value("lookup").run()
    at.radio(key="stp_rule").set_value("earliest").run()
    at.button(key="stp_one").click().run()
    assert errors(at) == [] and decoder(at).proposer.rule == "earliest"   # vLLM's search rule, in the app
    at = step_page(warm, stp_method="plain", stp_new=4)
    # before any run, the chart of passes is already on the page (empty), so the browser has loaded
    # the chart library before Play, not after it
    empty = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert "stp" not in at.session_state and empty and all(tr["x"] == [] for tr in empty)
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    bars = {tr["name"]: tr["y"] for tr in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]}
    assert sum(bars["target only (nothing drafted)"]) == 4 and sum(bars["bonus"]) == 0
    assert 'title="step 1 · target only"' in "".join(m.value for m in at.markdown)


def test_sampled_step_draws_r_and_the_residual(warm):
    # temperature 1 with an unrelated drafter: early rejections, each with its residual
    at = step_page(warm, stp_method="draft", stp_drafter_pick="tiny:1", stp_temp=1.0, stp_k=4, stp_seed=3)
    for _ in range(4):
        at.button(key="stp_one").click().run()
        assert errors(at) == []
        if decoder(at).steps[-1].rejected_at is not None:
            break
    rec = decoder(at).steps[-1]
    assert rec.rejected_at is not None and not rec.greedy
    figs = figures(at)
    dec_fig = next(f for f in figs if title(f).startswith("Accept when r"))
    bars, draws = dec_fig["data"]
    assert draws["y"] == pytest.approx([float(d) for d in rec.draws])
    assert bars["y"] == pytest.approx([min(1.0, r) for r in rec.ratios])
    res = next(f for f in figs if title(f).startswith("Rejected at position"))
    names = [tr["name"] for tr in res["data"]]
    assert names[2].startswith("residual")
    want = residual(rec.p_rejected, rec.q_rejected)
    ids = sorted(set(torch.topk(want, 8).indices.tolist()) | {rec.next_token}, key=lambda t: -float(want[t]))
    assert res["data"][2]["y"][: 3] == pytest.approx([float(want[t]) for t in ids[:3]], abs=1e-6)
    assert "residual" in text(at)


def test_against_plain_matches_in_float32_and_fills_the_calculator(warm):
    at = step_page(warm, stp_method="lookup", stp_n=1, stp_new=10)
    at.button(key="stp_play").click().run()
    at.button(key="stp_check_btn").click().run()
    assert errors(at) == []
    assert any("Same 10 tokens as plain greedy decoding" in s.value for s in at.success)
    assert "Measured speedup" in metrics(at)
    entry = at.session_state["measured_runs"]["lookup"]
    assert entry["plain"] is not None and entry["plain_steps"]
    shown = at.session_state["stp"]["check"].speedup          # the median of the two repeats' ratios, shown
    assert entry["speedup"] == shown                           # ... is what the calculator is handed
    at.switch_page("pages/breakeven.py").run()
    at.button(key="bk_fill_btn").click().run()
    assert errors(at) == []
    s = entry["summary"]
    assert s.alpha is not None and s.tested > 0                # lookup with n = 1 drafts on this prompt
    assert at.slider(key="bk_alpha").value == pytest.approx(round(s.alpha, 2))  # alpha, never alpha-hat
    body = text(at)
    assert f"α̂ = {s.draft_acceptance_rate:.2f}" in body and "τ = 1 + α̂·k̄" in body
    assert "Per-position acceptance" in str([c.proto for c in at.get("plotly_chart")])
    assert "Cost-model check" in body and "predicted" in body and f"measured **{shown:.2f}×**" in body
    assert f"measured τ = **{s.tokens_per_pass:.2f}**" in body


def test_calculator_says_the_chain_law_does_not_describe_a_tree_run(warm):
    at = step_page(warm, stp_method="suffix", stp_new=16)
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    from specviz.core.records import is_tree_run
    assert is_tree_run(at.session_state["measured_runs"]["suffix"]["steps"])     # suffix drafted a tree here
    at.switch_page("pages/breakeven.py").run()
    at.selectbox(key="bk_pick").set_value("suffix").run()
    at.button(key="bk_fill_btn").click().run()
    assert errors(at) == []
    said = [w.value for w in at.warning if "drafted trees" in w.value]
    assert said and all("does not describe it" in w and "Trees page" in w for w in said)
    at = step_page(warm, stp_method="lookup", stp_new=12)                       # a chain: no such warning
    at.button(key="stp_play").click().run()
    at.switch_page("pages/breakeven.py").run()
    at.selectbox(key="bk_pick").set_value("lookup").run()
    assert not [w.value for w in at.warning if "drafted trees" in w.value]


def test_step_through_lookup_match_rule_is_the_cli_and_bench_experiment(warm):
    from specviz.engine.methods import SELF_SIZED_CAP
    at = step_page(warm, stp_method="lookup", stp_new=12)               # the page's defaults: match rule, k = 4
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    assert decoder(at).cfg.k == SELF_SIZED_CAP == 24                     # capped at 24, as the CLI and the bench
    entry = at.session_state["measured_runs"]["lookup"]
    assert entry["k"] == 24 and entry["self_sized"]
    from specviz.engine.experiment import Setting
    said = Setting.of(decoder(at).proposer, decoder(at).cfg).describe()   # what ran, in its own words
    assert "as far as the match goes" in said and "at most 24 tokens" in said
    at.switch_page("pages/breakeven.py").run()
    shown = at.selectbox(key="bk_pick").format_func("lookup")             # the picker names the run that ran
    assert shown.startswith(said) and ", greedy, 12 tokens" in shown


def test_bad_input_is_an_error_and_keeps_the_run(warm):
    at = step_page(warm, stp_method="lookup", stp_n=1)
    at.button(key="stp_one").click().run()
    assert errors(at) == []
    before = metrics(at)["Target passes"]
    cases = [("stp_prompt", "   ", "prompt is empty"), ("stp_k", 0, "k must be between"),
             ("stp_k", 40, "k must be between"), ("stp_n", 0, "n must be between"),
             ("stp_prompt", "word " * 3000, "context window")]
    for key, value, message in cases:
        good = at.session_state[key]
        (at.text_area(key=key) if key == "stp_prompt" else at.number_input(key=key)).set_value(value)
        at.run()
        at.button(key="stp_one").click().run()
        errs = errors(at)
        assert any(message in e for e in errs), (key, value, errs)
        assert metrics(at)["Target passes"] == before           # the earlier run is still shown
        (at.text_area(key=key) if key == "stp_prompt" else at.number_input(key=key)).set_value(good)
        at.run()


def test_a_target_that_does_not_load_is_an_error(warm):
    at = step_page(warm, stp_method="lookup")
    at.button(key="stp_one").click().run()
    at.sidebar.text_input(key="target_input").set_value("/no/such/model")
    at.sidebar.button(key="apply_model").click().run()
    at.button(key="stp_one").click().run()
    errs = errors(at)
    assert any("Could not load the target" in e and "/no/such/model" in e for e in errs), errs
    assert metrics(at)["Target passes"] == "1"


def test_a_drafter_with_another_tokenizer_is_refused(warm, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from specviz.engine.models import tiny_llama
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator(["the harbour town sits at the mouth of a slow green river"] * 3,
                            trainers.BpeTrainer(vocab_size=300, special_tokens=["<eos>"], show_progress=False,
                                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>")
    other = tiny_llama(vocab_size=len(tok), seed=5)
    other.model.save_pretrained(tmp_path, safe_serialization=True)
    tok.save_pretrained(tmp_path)
    at = step_page(warm, stp_method="draft", stp_drafter_pick=OTHER, stp_drafter_path=str(tmp_path))
    at.button(key="stp_one").click().run()
    errs = errors(at)
    assert any("tokenizers differ" in e for e in errs), errs
    assert "stp" not in at.session_state or at.session_state["stp"]["method"] != "draft"


# -- Break-even calculator ---------------------------------------------------------------------
def bk_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/breakeven.py").run()
    return at


def test_calculator_check_values_and_charts(warm):
    at = bk_page()
    assert errors(at) == []
    m = metrics(at)
    assert m["Expected tokens per pass E[τ]"] == "3.36" and m["Predicted speedup"] == "2.80×"
    assert m["Break-even α at this k"] == "0.17" and m["Best k at this α"] == "k = 8"
    figs = figures(at)
    by_alpha = next(f for f in figs if title(f).startswith("Speedup vs α"))
    k4 = next(tr for tr in by_alpha["data"] if tr["name"] == "k = 4")
    assert k4["line"]["width"] == 4                                 # the chosen k is drawn thick
    assert k4["y"][k4["x"].index(0.8)] == pytest.approx(2.8013, abs=1e-3)
    assert {tr["name"] for tr in by_alpha["data"]} >= {"k = 1", "k = 2", "k = 8", "k = 16"}
    by_k = next(f for f in figs if title(f).startswith("Speedup vs draft length"))
    star = next(tr for tr in by_k["data"] if tr["name"] == "best k")
    assert star["x"] == [8] and star["y"][0] == pytest.approx(3.092, abs=1e-3)


def test_calculator_reacts_and_rejects_bad_k(warm):
    at = bk_page()
    at.slider(key="bk_alpha").set_value(0.3).run()
    at.number_input(key="bk_c").set_value(0.5).run()
    m = metrics(at)
    assert m["Best k at this α"] == "k = 0"                       # cheap guesses are not cheap enough
    assert any("Best k = 0: don't speculate" in c.value for c in at.caption)
    assert float(m["Predicted speedup"].rstrip("×")) < 1
    at.number_input(key="bk_k").set_value(0).run()
    assert any("k must be between 1 and 16" in e for e in errors(at))


def test_calculator_measures_v_and_switches_to_the_table(warm):
    at = bk_page()
    at.button(key="bk_measure").click().run()
    assert errors(at) == []
    assert at.radio(key="bk_vmode").value == "the measured table"
    table = at.session_state["v_tables"][("tiny:0", "auto", "float32")]
    from specviz.engine.passcost import V_KS
    assert tuple(sorted(table)) == V_KS and all(v > 0 for v in table.values())
    assert set(table.spread) == set(V_KS)                           # the spread travels with the table
    vfig = next(f for f in figures(at) if title(f).startswith("Verification cost"))
    assert vfig["data"][0]["y"] == pytest.approx([table[k] for k in sorted(table)])
    assert vfig["data"][0]["error_y"]["array"] == pytest.approx([table.spread[k] / 2 for k in sorted(table)])
    assert "measured v(k) table" in text(at)


# -- pure helpers behind the pages -------------------------------------------------------------
def test_decision_rows_for_lookup_in_sampled_mode():
    rec = StepRecord(index=0, k=2, context_len=9, drafted=[4, 8], decisions=[True, False], draws=[0.1, 0.9],
                     ratios=[0.6, 0.2], n_accepted=1, next_token=3, next_origin="correction", emitted=[4, 3],
                     draft_s=0, verify_s=0, logit_top1=[], logit_gap=[], greedy=False, q_deterministic=True,
                     p_top=[TopTokens([4, 1], [0.6, 0.4]), TopTokens([3, 8], [0.8, 0.2]), TopTokens([1], [1.0])],
                     q_top=[TopTokens([4, 0], [1.0, 0.0]), TopTokens([8, 0], [1.0, 0.0])])
    rows = vz.decision_rows(rec, str)
    assert [r["decision"] for r in rows] == ["accepted", "rejected"]
    assert rows[1]["p(x)"] == pytest.approx(0.2) and rows[1]["q(x)"] == 1.0 and rows[1]["r"] == 0.9
    html = vz.text_html([rec], lambda t: f"t{t}")
    assert re.findall(r'title="step 1 · ([a-z ]+)"', html) == ["accepted draft", "correction"]


def test_a_near_tie_flip_is_pointed_out_and_explained(warm, monkeypatch):
    # The detection itself is specviz.core.neartie's (tests/core/test_neartie.py); here: what the page says about it.
    import specviz.engine.measure as pc
    from specviz.core.neartie import Divergence
    real = pc.against_plain

    def flipped(*args, **kwargs):
        chk = real(*args, **kwargs)
        chk.divergence = Divergence(2, chk.plain.token_ids[2], chk.plain.token_ids[2] + 1, 30.0, 0.125, True)
        return chk

    monkeypatch.setattr(pc, "against_plain", flipped)
    at = step_page(warm, stp_method="lookup", stp_n=1, stp_new=6)
    at.button(key="stp_play").click().run()
    at.button(key="stp_check_btn").click().run()
    assert errors(at) == []
    warning = " ".join(w.value for w in at.warning)
    assert "near-tie flip, not a bug" in warning and "at new token 3" in warning
    assert "differ by 0.125" in warning and "2 bfloat16 ulps there = 0.250" in warning


def test_settings_and_the_run_survive_a_visit_to_another_page(warm):
    at = step_page(warm, stp_method="lookup", stp_n=1, stp_k=6, stp_temp=0.5)
    at.button(key="stp_one").click().run()
    passes = metrics(at)["Target passes"]
    at.switch_page("pages/breakeven.py").run()
    at.slider(key="bk_alpha").set_value(0.42).run()
    at.switch_page("pages/home.py").run()
    at.switch_page("pages/step_through.py").run()
    assert errors(at) == []
    assert at.selectbox(key="stp_method").value == "lookup"
    assert (at.number_input(key="stp_k").value, at.number_input(key="stp_n").value) == (6, 1)
    assert at.number_input(key="stp_temp").value == 0.5
    assert metrics(at)["Target passes"] == passes
    at.switch_page("pages/breakeven.py").run()
    assert at.slider(key="bk_alpha").value == 0.42


def test_home_with_an_unloadable_target_shows_the_error_instead_of_loading_forever(tmp_path):
    import time

    from specviz.ui import loading, loadjobs

    missing = str(tmp_path / "no-such-model")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["target_name"] = missing
    at.run()
    key = (missing, "auto", "float32")
    deadline = time.time() + 60
    while not loadjobs._JOBS[key]["done"].is_set() and time.time() < deadline:
        time.sleep(0.1)
    started = loadjobs._JOBS[key]["started"]
    at.run()
    assert not at.exception
    assert any("could not be loaded" in e.value for e in at.error)                       # Home says why
    assert not any("Loading the target model" in i.value for i in at.info)
    at.run()
    assert loadjobs._JOBS[key]["started"] == started        # the failed load is not restarted on every rerun
    side = AppTest.from_file(APP, default_timeout=120)     # the sidebar, read on a page AppTest draws it on
    side.session_state["target_name"] = missing
    side.run()
    side.switch_page("pages/step_through.py").run()
    assert any("could not be loaded" in e.value and "Apply" in e.value for e in side.sidebar.error)
    assert not any("loading in the background" in c.value for c in side.sidebar.caption)
    loading.retry_failed(key)                              # Apply again: the load starts afresh
    assert key not in loadjobs._JOBS


def test_a_play_that_waited_for_the_load_leaves_the_sidebar_saying_loaded():
    import threading
    import time

    from specviz.ui import loadjobs

    name = "tiny:5"                                         # a target no other test loaded (cache_resource is keyed)
    key = (name, "auto", "float32")
    model = loadjobs._load(*key)
    job = {"result": None, "error": None, "started": time.time()}

    class LoadsWhenWaitedFor(threading.Event):              # the load ends exactly when a page first waits for it
        def wait(self, timeout=None):
            job["result"] = model
            self.set()
            return True

    job["done"] = LoadsWhenWaitedFor()
    loadjobs._JOBS[key] = job
    try:
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["target_name"] = name
        at.run()                                            # Home: starts the load, never waits for it
        at.switch_page("pages/step_through.py").run()
        if not job["done"].is_set():                        # the page did not need the model yet: Play does
            assert any("loading in the background" in c.value for c in at.sidebar.caption)
            at.button(key="stp_play").click().run()
        assert not at.exception and job["done"].is_set()
        lines = [c.value for c in at.sidebar.caption]
        assert any(line.startswith("Target: ") and "float32 on cpu" in line for line in lines), lines
        assert not any("loading in the background" in line for line in lines), lines
        # lookup's sole rule and why: a tiny model built here was never timed, so the default, said as such
        assert any(line.startswith("Lookup here: a 2-token match seen only once before drafts all 24 tokens (the "
                                   "default: this machine's verify pass of 25 rows was not timed)") for line in lines)
    finally:
        loadjobs._JOBS.pop(key, None)


@pytest.mark.parametrize("unpacked", [False, True])
def test_the_sidebar_says_when_a_load_unpacks_the_gguf(monkeypatch, unpacked):
    """The default model's first load on a machine unpacks its GGUF (~30 s on 2 cores): the sidebar says so while it
    loads, and says nothing of it once a copy is kept (engine/modelcache.py)."""
    import threading
    import time

    from specviz.engine.models import DEFAULT
    from specviz.ui import loading, loadjobs

    key = (DEFAULT, "auto", "float32")
    monkeypatch.setattr(loading, "default_unpacked", lambda: unpacked)
    before = loadjobs._JOBS.get(key)
    loadjobs._JOBS[key] = {"result": None, "error": None, "started": time.time(), "done": threading.Event()}
    try:
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["target_name"] = DEFAULT
        at.run()
        at.switch_page("pages/step_through.py").run()
        lines = [c.value for c in at.sidebar.caption]
        assert any("loading in the background" in line for line in lines), lines
        assert any("unpacks the GGUF" in line for line in lines) is not unpacked, lines
    finally:
        if before is None:
            loadjobs._JOBS.pop(key, None)
        else:
            loadjobs._JOBS[key] = before
