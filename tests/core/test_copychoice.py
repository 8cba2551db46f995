"""copy-recycle's rule (core/copychoice.py): which part drafts a pass, and how the two parts are scored."""
import pytest

from specviz.core.copychoice import COPY, RECYCLE, PartChooser, decided, kept_along, merge, tree_depth

TREE = ([5, 6, 7, 8], [-1, 0, 1, -1])        # 5 -> 6 -> 7, and 8 beside 5


def test_kept_along_is_the_longest_root_path_the_text_begins_with():
    assert kept_along(*TREE, [1, 5, 6, 9], 1) == 2
    assert kept_along(*TREE, [1, 8, 6], 1) == 1
    assert kept_along(*TREE, [1, 9], 1) == 0
    assert kept_along(*TREE, [1, 5, 6, 7, 4], 1) == 3
    assert tree_depth(TREE[1]) == 3 and tree_depth([]) == 0


def test_a_pass_is_decided_only_when_the_text_goes_past_the_matching_path_or_the_tree_ends():
    assert decided(*TREE, [1, 5, 6], 1) is None           # 7 may still follow
    assert decided(*TREE, [1, 5, 6, 2], 1) == 2           # it did not
    assert decided(*TREE, [1, 5, 6, 7], 1) == 3           # the whole depth matched
    assert decided(*TREE, [1], 1) is None                 # nothing committed after the pass yet
    assert decided(*TREE, [1, 3], 1) == 0


def test_which_part_drafts():
    r = PartChooser(always_copy=2)
    assert r.choose(0, 0, 12) == RECYCLE                  # no match: recycling
    assert r.choose(0, 0, 0) == RECYCLE
    assert r.choose(2, 16, 12) == COPY                    # a match of 2 tokens or more: always copying
    assert r.choose(1, 8, 0) == COPY                      # recycling has nothing to draft
    assert r.choose(1, 8, 12) == COPY                     # one-token match, no evidence yet: a tie goes to copying
    r.kept[1] = {COPY: 3, RECYCLE: 4}
    assert r.choose(1, 8, 12) == RECYCLE                  # ... then the part that kept more
    assert r.choose(3, 8, 12) == COPY                     # a long match copies whatever the score
    r.reset()
    assert r.kept[1] == {COPY: 0, RECYCLE: 0} and r.pending == [] and r.scored == 0
    with pytest.raises(ValueError):
        PartChooser(always_copy=0)


def test_both_parts_are_scored_on_the_same_passes_once_the_text_decides_them():
    r = PartChooser()
    copy_tree, recycle_tree = ([5, 6], [-1, 0]), ([5, 9, 6], [-1, 0, 0])
    r.note(1, 1, copy_tree, recycle_tree)
    r.score([0, 5])                                       # both still open
    assert r.scored == 0 and len(r.pending) == 1
    r.score([0, 5, 9, 3])                                 # copy kept 1, recycling 2 (5 then 9)
    assert r.scored == 1 and r.kept[1] == {COPY: 1, RECYCLE: 2} and r.pending == []
    assert r.choose(1, 2, 3) == RECYCLE
    r.note(4, 1, ([3, 4, 4], [-1, 0, 1]), ([7], [-1]))
    r.score([0, 5, 9, 3, 3, 4, 4])                        # copy's whole depth matched: 3 against 0
    assert r.kept[1] == {COPY: 4, RECYCLE: 2} and r.choose(1, 2, 3) == COPY


def test_each_match_length_keeps_its_own_score():
    r = PartChooser(always_copy=10**9)                    # learning at every match length
    r.note(1, 2, ([5, 6], [-1, 0]), ([7], [-1]))          # a two-token match: recycling's 7 is what followed
    r.note(1, 6, ([7, 8], [-1, 0]), ([9], [-1]))          # a six-token match (bucket 4+): copy kept 2
    r.score([0, 7, 8, 1])
    assert r.kept[2] == {COPY: 0, RECYCLE: 1} and r.kept[4] == {COPY: 2, RECYCLE: 0} and r.kept[1][COPY] == 0
    assert r.choose(2, 2, 1) == RECYCLE and r.choose(5, 2, 1) == COPY and r.choose(1, 2, 1) == COPY


def test_merge_keeps_both_trees_and_shares_their_common_nodes():
    copy = ([5, 6, 7], [-1, 0, 1])                        # 5 -> 6 -> 7
    recycle = ([5, 9, 8, 6], [-1, 0, -1, 2])              # 5 -> 9, and 8 -> 6 beside 5
    tokens, parents, from_b = merge(copy, recycle)
    assert tokens == [5, 6, 7, 9, 8, 6] and parents == [-1, 0, 1, 0, -1, 4] and from_b == [-1, -1, -1, 1, 2, 3]
    # every root path of either tree is a root path of the merged tree, so it keeps at least what either keeps
    for text in ([0, 5, 6, 7], [0, 5, 9], [0, 8, 6], [0, 4]):
        assert kept_along(tokens, parents, text, 1) == max(kept_along(*copy, text, 1), kept_along(*recycle, text, 1))
    assert merge(copy, ([], [])) == ([5, 6, 7], [-1, 0, 1], [-1, -1, -1])
