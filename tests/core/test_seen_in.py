"""Where each drafted branch was copied from, in words (teach/steps.py) and as a tree drawing's tags (viz/tree.py)."""
from specviz.core.records import StepRecord
from specviz.teach.steps import branches, seen_in_lines
from specviz.viz.tree import seen_short


def record(drafted, parents, seen_in):
    return StepRecord(index=0, k=4, context_len=10, drafted=drafted, decisions=[], draws=[], ratios=[],
                      n_accepted=0, next_token=0, next_origin="correction", emitted=[0], draft_s=0.0, verify_s=0.0,
                      logit_top1=[], logit_gap=[], parents=parents, seen_in=seen_in)


def label(t):
    return f"t{t}"


def test_branches_are_root_to_leaf_paths():
    assert branches([-1, 0, 1]) == [[0, 1, 2]]
    assert branches([-1, 0, 0, -1]) == [[0, 1], [0, 2], [3]]
    assert branches([]) == []


def test_a_chain_is_one_line_split_where_its_source_changes():
    rec = record([1, 2, 3], [-1, 0, 1], ["this prompt", "this prompt", "this output"])
    assert seen_in_lines(rec, label) == ["`t1` `t2` — seen in **this prompt**; then `t3` — seen in **this output**"]


def test_a_tree_has_one_line_per_branch():
    rec = record([1, 2, 3, 4], [-1, 0, 0, -1], ["this prompt", "request 2 output", "this prompt", "this output"])
    assert seen_in_lines(rec, label) == [
        "Branch 1: `t1` — seen in **this prompt**; then `t2` — seen in **request 2 output**",
        "Branch 2: `t1` `t3` — seen in **this prompt**",
        "Branch 3: `t4` — seen in **this output**"]


def test_no_lines_when_the_step_recorded_no_sources():
    assert seen_in_lines(record([1, 2], [-1, 0], None), label) == []
    assert seen_in_lines(record([], [], []), label) == []
    assert seen_in_lines(record([1, 2], [-1, 0], ["this prompt"]), label) == []   # a mismatch is not guessed at


def test_short_tags():
    assert [seen_short(w) for w in ("this prompt", "this output", "request 12 output",
                                    "request 3 output, this prompt")] == ["prompt", "output", "req 12", "req 3"]
