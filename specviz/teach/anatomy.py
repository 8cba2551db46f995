"""The anatomy of one verification pass, read from its StepRecord alone: a chain or a tree.

The target is fed the root (the last committed token) and every drafted node in one pass. Node i sits
at position root + depth(i) and sees the cached context, the root, its ancestors and itself (the
tree attention mask of core/tree.py; for a chain that is the causal mask). Output row r is the
target's distribution for the position *after* the token fed at r: row 0 tests the root's children,
the row of node u tests u's children (the one-position shift). Acceptance walks down from the root;
at the end of the accepted path the same row gives the correction (a child was rejected) or the
bonus (a leaf was reached). The target cache then keeps the entries of the root and the accepted
path, moved down to consecutive slots (compacted: for a chain the path is a prefix, so this is a
suffix cut), and drops the rest.
"""
from __future__ import annotations

from dataclasses import dataclass

from specviz.core import fmt as F
from specviz.core.records import StepRecord
from specviz.core.tree import depths, tree_mask


@dataclass
class Row:
    row: int            # output row of the pass (0 = the root, r = node r - 1)
    fed: str            # the token fed at this row ("root" or "d3")
    sees: str           # what that row attends to
    position: int       # absolute position whose token this row's distribution is for
    scores: str         # what the row is used for
    verdict: str        # what it did this step


@dataclass
class Anatomy:
    is_tree: bool
    fed: list[tuple[int, int, str]]   # (position, token id, role) for the root and the n nodes
    rows: list[Row]
    mask: list[list[int]]             # (n+1) x (n+2): column 0 = the cached context, then the fed tokens
    path: list[int]                   # accepted nodes, root's child first
    kept_rows: list[int]              # rows of the pass whose cache entries stay: 0 and the path's
    moves: list[tuple[int, int]]      # (slot before, slot after) of each kept entry that the compaction moves
    target_cache: tuple[int, int, int]
    drafter_cache: tuple[int, int, int] | None
    dropped_positions: list[int]      # positions of the target cache entries dropped (sorted, may repeat in a tree)
    dropped_nodes: list[int]          # the drafted nodes whose entries were dropped
    drafter_dropped: list[int]        # the drafter cache slots dropped at the rollback
    feature_layers: list[int] | None = None  # the target layers fused into the head's input (EAGLE-3), else None


def name(i: int) -> str:
    """Node i's name: d1 for node 0 (the root's first child), as in a chain's d1, d2, ..."""
    return f"d{i + 1}"


def span(values: list[int], noun: str = "position") -> str:
    """'position 258', 'positions 258–260', or a list when the values are not consecutive."""
    if not values:
        return f"no {noun}s"
    if len(values) == 1:
        return f"{noun} {values[0]}"
    if values == list(range(values[0], values[0] + len(values))):
        return f"{noun}s {values[0]}–{values[-1]}"
    return f"{noun}s " + ", ".join(map(str, values))


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def of(rec: StepRecord) -> Anatomy:
    n, c = rec.n_drafted, rec.context_len
    parents = rec.parents if rec.parents else list(range(-1, n - 1))
    dep = depths(parents)
    root = c - 1                                                   # position of the last committed token
    fed = [(root, rec.last_token, "root: the last committed token")]
    for i, t in enumerate(rec.drafted):
        under = "the root" if parents[i] < 0 else name(parents[i])
        fed.append((root + dep[i], t, f"draft {name(i)}, depth {dep[i]}, under {under}" if rec.is_tree
                    else f"draft {name(i)}"))
    m = tree_mask(parents)                                         # (n+1, n+1) bool
    mask = [[1] + [int(v) for v in m[r].tolist()] for r in range(n + 1)]
    kids = {u: [i for i, par in enumerate(parents) if par == u] for u in range(-1, n)}
    verdict_of = dict(zip(rec.tested, rec.decisions))
    on_path = set(rec.path)
    end = rec.path[-1] if rec.path else -1                         # the node whose row gives the next token
    rows = []
    for r in range(n + 1):
        u = r - 1                                                  # the node fed at this row (-1: the root)
        anc = [] if u < 0 else _ancestors(parents, u)
        sees = "the cache + the root" + ("" if u < 0 else " + " + ", ".join(name(a) for a in anc))
        pos = (root if u < 0 else root + dep[u]) + 1
        ch = kids[u]
        scores = (f"p for position {pos}: tests draft{'s' if len(ch) > 1 else ''} " + ", ".join(name(x) for x in ch)
                  if ch else f"p for position {pos}: no draft there (a leaf)")
        if u >= 0 and u not in on_path:
            verdict = "unused (this node is not on the accepted path)"
        else:
            tried = [x for x in ch if x in verdict_of]
            said = ", ".join(f"{name(x)} {'accepted' if verdict_of[x] else 'rejected'}" for x in tried)
            if u == end and n == 0:
                what = "the next token is drawn from this row (nothing drafted: an ordinary decoding step)"
                verdict = what
            elif u == end:
                what = ("the bonus token is drawn from this row" if rec.next_origin == "bonus"
                        else "the correction is drawn from this row" + (" (the residual)" if not rec.greedy
                                                                        and tried else ""))
                verdict = f"{said}: {what}" if said else what
            else:
                verdict = said
        rows.append(Row(r, "root" if u < 0 else name(u), sees, pos, scores, verdict))
    kept = [0] + [i + 1 for i in rec.path]
    t0, t1, t2 = rec.target_cache
    moves = [(t0 + r, t0 + j) for j, r in enumerate(kept) if r != j]
    dropped_nodes = [i for i in range(n) if i not in on_path]
    dc = rec.drafter_cache
    return Anatomy(rec.is_tree, fed, rows, mask, list(rec.path), kept, moves, rec.target_cache, dc,
                   sorted(root + dep[i] for i in dropped_nodes), dropped_nodes,
                   list(range(dc[2], dc[1])) if dc else [], rec.feature_layers)


def _ancestors(parents: list[int], i: int) -> list[int]:
    out = []
    while i >= 0:
        out.append(i)
        i = parents[i]
    return out[::-1]


# -- the texts the page shows (layout stays in the page) -------------------------------------------
def inputs_text(a: Anatomy, label) -> str:
    n = len(a.fed) - 1
    if n == 0:
        pos, t, _ = a.fed[0]
        return (f"**1 · The inputs.** Nothing was drafted, so the target is fed 1 token, the last committed one, "
                f"`{label(t)}` (position {pos}): an ordinary decoding step.")
    head = (f"**1 · The inputs.** The target is fed {len(a.fed)} tokens in one pass: the root and the "
            f"{plural(n, 'drafted node') if a.is_tree else plural(n, 'draft')}. ")
    if a.is_tree:
        head += ("Each node sits at position root + its depth, so siblings share a position, and the tree "
                 "attention mask lets a node see only the cache, the root, its ancestors and itself: ")
    return head + ", ".join(f"`{label(t)}` ({role}, position {pos})" for pos, t, role in a.fed) + "."


def shift_text(a: Anatomy) -> str:
    if a.is_tree:
        return ("**2 · Which row tests which node.** Each row's distribution is for the position after the "
                "token fed there: the root's row tests the root's children, a node's row tests that node's "
                "children, one after another, each against the residual left by the rejected ones. "
                "Acceptance walks down from the root; the row at the end of the accepted path gives the "
                "correction (a child was rejected) or the bonus (a leaf was reached). Rows off the path are "
                "computed and thrown away.")
    return ("**2 · The one-position shift.** Row i has seen the inputs up to i, so its distribution is for "
            "the *next* position: row 0 (fed the last committed token) tests d1, row i tests d(i+1), and the "
            "last row, which has seen every draft, is where a **bonus** token comes from.")


def cache_text(a: Anatomy, rec: StepRecord) -> str:
    t0, t1, t2 = a.target_cache
    out = (f"**3 · The KV caches, measured.** Target: **{t0}** entries before the pass → **{t1}** after it "
           f"(+{t1 - t0}, one per fed token) → **{t2}** after the rollback. ")
    kept = "the root's entry" + (" and those of " + ", ".join(name(i) for i in a.path) if a.path else "")
    if a.is_tree:
        out += f"The accepted path keeps {kept}"
        if a.moves:
            out += (", gathered and moved down to consecutive slots (" + ", ".join(
                f"{name(r - 1)}: slot {t0 + r} → {t0 + j}" for j, r in enumerate(a.kept_rows) if r != j)
                + "), so each one's slot is its position (root + depth)")
        else:
            out += ", already in the first slots"
        out += (f"; the entries of the {plural(len(a.dropped_nodes), 'node')} off the path are dropped"
                + (f" ({', '.join(name(i) for i in a.dropped_nodes)})" if a.dropped_nodes else "") + ". ")
    else:
        out += (f"It keeps {kept} and drops " + (
            f"the entries of {span(a.dropped_positions)} (the rejected and untested "
            f"{'draft' if len(a.dropped_positions) == 1 else 'drafts'}): a cut of the end. "
            if a.dropped_positions else "nothing. "))
    return out + "The correction or bonus token has no entry yet: it is fed first next step."


def drafter_text(a: Anatomy, method: str) -> str:
    """What the proposer's own cache did, or why it has none."""
    if a.drafter_cache is None:
        if method in ("lookup", "plain"):
            return ("This proposer keeps no KV cache of its own: lookup searches the token ids." if method == "lookup"
                    else "Plain decoding drafts nothing and keeps no second cache.")
        if method == "suffix":
            return ("This proposer keeps no KV cache of its own: suffix decoding searches token ids (this request's "
                    "and the session's earlier requests') and counts what followed the context's tail.")
        if method in ("recycle", "recycle-chain", "copy-recycle"):
            return ("This proposer keeps no KV cache and no weights of its own: token recycling reads its tree from a "
                    "table of the target's own top candidates, filled from the logits of earlier passes"
                    + (" (or copies suffix's tree when the context offers a match)" if method == "copy-recycle" else "")
                    + ".")
        return ("This proposer keeps no KV cache of its own: Medusa's heads are small MLPs that read the "
                "target's last hidden state, so each step costs one call of the heads, not a pass over context.")
    d0, d1, d2 = a.drafter_cache
    dropped = span(a.drafter_dropped, "slot") if a.drafter_dropped else "nothing"
    if a.feature_layers:                                  # the EAGLE-3 head: fused features
        layers = ", ".join(map(str, a.feature_layers[:-1])) + " and " * (len(a.feature_layers) > 1) + \
            str(a.feature_layers[-1])
        return (f"The EAGLE-3 head keeps its own KV cache (one decoder layer over (feature, token) pairs): "
                f"**{d0}** → **{d1}** after drafting → **{d2}** after the rollback ({dropped} dropped). "
                f"Its real features are the outputs of the target's layer{'s' * (len(a.feature_layers) > 1)} "
                f"{layers} at each committed position, concatenated and projected to the hidden size by one "
                "linear layer; the decode loop taps those layers only for this head. While drafting, each "
                "step feeds back the head's own output instead. Every drafted entry goes at the rollback, and "
                "the next step re-feeds the committed positions with the target's real fused features.")
    if "eagle" in method or method == "hybrid":          # hybrid = lookup + the EAGLE head
        return (f"The EAGLE head keeps its own KV cache (one decoder layer over (feature, token) pairs): "
                f"**{d0}** → **{d1}** after drafting → **{d2}** after the rollback ({dropped} dropped). "
                "Every drafted entry goes, even a kept draft's: those were computed from the head's own guessed "
                "features, so at the start of the next step the head re-feeds the committed positions with the "
                "target's real features.")
    return (f"Drafter: **{d0}** → **{d1}** after drafting → **{d2}** after the rollback ({dropped} dropped). "
            "The entries of kept drafts stay (the drafter fed those very tokens); it never feeds its last draft, "
            "and it catches up on the committed tokens it has not seen at the start of the next step.")


def tree_tally(s) -> list[tuple[str, str, str]]:
    """For tree methods: α = kept ÷ tested and kept per pass, the numbers that say how well a tree does."""
    alpha = F.num(s.alpha, ".0%", f" ({s.accepted} / {s.tested})")
    per = F.num(s.accepted / s.target_passes if s.target_passes else None)
    return [("Kept ÷ tested α", alpha, "accepted ÷ children tried (a tree tries children in turn until one "
             "is kept): the papers' α"),
            ("Kept per pass", per, "accepted nodes ÷ target passes = τ − 1")]
