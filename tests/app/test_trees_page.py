"""AppTest for the Trees page in test-sized mode: the shipped heads do not fit the tiny target, so the
page must say so in one line (no traceback); the drawing itself is tested in tests/tiny/test_trees.py."""
import os
from pathlib import Path

os.environ["SPECVIZ_TINY"] = "1"  # before the app (and specviz.ui.loading) is imported

from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_trees_page_explains_and_refuses_heads_of_another_shape():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/trees.py").run()
    assert not at.exception
    assert "tree attention mask" in " ".join(m.value for m in at.markdown)
    at.button(key="tr_run").click().run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "hidden size" in errs[0], errs


def test_trees_page_draws_a_tree_and_its_mask(monkeypatch):
    """With heads shaped for the tiny target (random, untrained), the page draws the tree and the mask."""
    import torch

    from specviz.proposers.eagle import EagleHead
    from specviz.proposers.eagle_tree import EagleTree
    from specviz.proposers.vocab import SubsetHead
    from specviz.ui import loading

    def tiny_tree(method, tgt, *a, **kw):
        torch.manual_seed(0)
        head = EagleHead.for_target(tgt.model.config).identity_init()
        return EagleTree(head, tgt.model.get_input_embeddings(),
                         SubsetHead(tgt.model.get_output_embeddings().weight, torch.arange(2, 2000)))

    monkeypatch.setattr(loading, "proposer_for", tiny_tree)
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/trees.py").run()
    at.button(key="tr_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert {m.label for m in at.metric} >= {"Tokens per pass τ", "Nodes per pass"}
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    assert "accepted path" in " ".join(m.value for m in at.markdown)


def test_step_through_lays_a_tree_step_out_as_a_tree(monkeypatch):
    """Step through with eagle-tree (heads shaped for the tiny target): the anatomy shows the fed nodes at
    root + depth, the tree mask, a row per node, and the tally adds kept ÷ tested and kept per pass."""
    import json

    import torch

    from specviz.core.tree import depths
    from specviz.proposers.eagle import EagleHead
    from specviz.proposers.eagle_tree import EagleTree
    from specviz.proposers.vocab import SubsetHead
    from specviz.ui import loading

    def tiny_tree(method, tgt, *a, **kw):
        torch.manual_seed(0)
        head = EagleHead.for_target(tgt.model.config).identity_init()
        return EagleTree(head, tgt.model.get_input_embeddings(),
                         SubsetHead(tgt.model.get_output_embeddings().weight, torch.arange(2, 2000)))

    monkeypatch.setattr(loading, "proposer_for", tiny_tree)
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/step_through.py").run()
    at.selectbox(key="stp_method").set_value("eagle-tree").run()
    for _ in range(4):
        at.button(key="stp_one").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        rec = at.session_state["stp"]["dec"].steps[-1]
        if rec.is_tree:
            break
    assert rec.is_tree
    at.number_input(key="stp_anat_guess").set_value(1)         # the anatomy opens after a guess
    at.button(key="stp_anat_run").click().run()
    assert any("Your guess 1" in x.value for x in [*at.success, *at.info])
    md = " ".join(m.value for m in at.markdown)
    root = rec.context_len - 1
    assert f"the root and the {rec.n_drafted} drafted nodes" in md and "k + 1" not in md
    for i, d in enumerate(depths(rec.parents)):               # each node at root + depth
        assert f"draft d{i + 1}, depth {d}," in md and f"position {root + d})" in md
    mask = next(json.loads(el.proto.spec) for el in at.get("plotly_chart")
                if "query (fed position)" in el.proto.spec and "d1:" in el.proto.spec)
    assert len(mask["data"][0]["z"]) == rec.n_drafted + 1
    rows = at.dataframe[-1].value
    assert len(rows) == rec.n_drafted + 1 and list(rows["fed"])[:2] == ["root", "d1"]
    labels = {m.label: m.value for m in at.metric}
    s = at.session_state["stp"]["dec"].summary()
    assert labels["Kept ÷ tested α"].endswith(f"({s.accepted} / {s.tested})") and s.tested < s.drafted
    assert labels["Kept per pass"] == f"{s.accepted / s.target_passes:.2f}"
    assert "keeps its own KV cache" in md


def test_trees_chain_vs_tree_is_measured_only_after_a_guess_and_scored_on_the_same_run(monkeypatch):
    """The chain-vs-tree measurement waits for a guess; then the score names the experiment that ran (heads
    shaped for the tiny target, random: the lesson's measurement, not its numbers)."""
    import torch

    from specviz.proposers.eagle import Eagle, EagleHead
    from specviz.proposers.eagle_tree import EagleTree
    from specviz.proposers.vocab import SubsetHead
    from specviz.teach import trees

    def tiny_heads(method, tgt, *a, **kw):
        torch.manual_seed(0)
        head = EagleHead.for_target(tgt.model.config).identity_init()
        parts = (head, tgt.model.get_input_embeddings(),
                 SubsetHead(tgt.model.get_output_embeddings().weight, torch.arange(2, 2000)))
        return EagleTree(*parts) if method.endswith("-tree") else Eagle(*parts)

    monkeypatch.setattr(trees, "make_proposer", tiny_heads)
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/trees.py").run()
    at.selectbox(key="tr_family").set_value("eagle")
    at.number_input(key="tr_new").set_value(8)
    at.button(key="tr_cvt_run").click().run()                       # no guess: nothing is measured
    assert not at.exception and "tr_cmp" not in at.session_state
    assert any("Commit to a guess first" in w.value for w in at.warning)
    at.number_input(key="tr_cvt_guess").set_value(0.5)
    at.button(key="tr_cvt_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    chain, tree = at.session_state["tr_cmp"]
    gain = tree.tokens_per_pass - chain.tokens_per_pass
    scored = [x.value for x in at.success] + [x.value for x in at.info]
    said = next(v for v in scored if "Your guess 0.5" in v)
    assert f"{gain:.3g}" in said
    assert "eagle k = 4 and eagle-tree (tree, depth ≤ 4) vs plain, greedy, 8 new tokens, one run each" in said
