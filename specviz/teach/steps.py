"""One step of Step through in words, read from its StepRecord: why nothing was drafted, what the tests of
a chain's drafts mean, where the step's last token came from. `label(token id)` gives a token's text."""
from __future__ import annotations

from specviz.core.records import StepRecord

GREEDY_RULE = ("Temperature 0: the rule in force is **same argmax** — a drafted token is kept when it is the "
               "token the target itself would pick. No random draw is made. The bars below show the target's "
               "softmax at temperature 1, the distribution each argmax is taken from.")


def no_draft(rec: StepRecord, method: str, label) -> str:
    """A step that drafted nothing: an ordinary decoding step."""
    why = rec.held or ("lookup found no earlier occurrence of the last n tokens" if method == "lookup"
           else "no earlier text continued the context's last tokens often enough" if method == "suffix"
           else "this method does not draft" if method == "plain" else "no draft this step")
    return (f"No draft ({why}): this target pass is an ordinary decoding step and commits one token, "
            f"“{label(rec.next_token)}”.")


def chain_notes(rec: StepRecord) -> list[str]:
    """The notes under a chain's p/q charts: the untested tail, and what q is for this proposer."""
    tested, notes = len(rec.decisions), []
    if tested < rec.n_drafted:
        notes.append(f"Positions {tested + 1}–{rec.n_drafted} were not tested: once a position is rejected, "
                     "everything drafted after it is discarded.")
    if rec.greedy and not rec.q_deterministic:
        notes.append("At temperature 0 the draft model proposes its own argmax, so its q is drawn one-hot too.")
    if rec.q_deterministic:
        notes.append("Prompt lookup has no distribution of its own: q puts all its mass on the copied token, so "
                     "p(x)/q(x) = p(x) and the draft is kept with probability p(x).")
    return notes


def outcome(rec: StepRecord, label) -> str:
    """Where a chain step's last token came from: a correction (greedy: the argmax; sampled: the residual)
    or the bonus."""
    if rec.next_origin != "correction":
        return (f"Every draft was accepted, so the same target pass also gives a **bonus** token: "
                f"“{label(rec.next_token)}”.")
    if rec.greedy:
        return (f"Rejected at position {rec.n_accepted + 1}: the target's argmax there is "
                f"“{label(rec.next_token)}”, which becomes the **correction** token.")
    return (f"The **correction** “{label(rec.next_token)}” is sampled from the residual: the "
            "mass p has where q had too little. That is what makes the output follow p exactly.")


def branches(parents: list[int]) -> list[list[int]]:
    """Every root-to-leaf path of a draft (a chain has one), as node indices, in drafting order."""
    has_child = set(parents)
    out = []
    for leaf in (i for i in range(len(parents)) if i not in has_child):
        path, u = [], leaf
        while u != -1:
            path.append(u)
            u = parents[u]
        out.append(path[::-1])
    return out


def _runs(nodes: list[int], seen_in: list[str]) -> list[tuple[str, list[int]]]:
    """Consecutive nodes grouped by where they were seen."""
    runs: list[tuple[str, list[int]]] = []
    for u in nodes:
        if runs and runs[-1][0] == seen_in[u]:
            runs[-1][1].append(u)
        else:
            runs.append((seen_in[u], [u]))
    return runs


def _verb(where: str) -> str:
    """Copied text was 'seen in' a text; a recycled token was 'recycled from' an earlier pass's candidates."""
    return "recycled from" if where.endswith(("candidates", "logits")) else "seen in"


def seen_in_lines(rec: StepRecord, label) -> list[str]:
    """Where each drafted branch was copied from ('this prompt', 'this output', 'request N output') or, for token
    recycling, which earlier step's candidates it was recycled from, one line per branch, split where a branch's
    tokens come from different texts; [] when the step records none."""
    if not rec.seen_in or len(rec.seen_in) != rec.n_drafted:
        return []
    parents = rec.parents or list(range(-1, rec.n_drafted - 1))
    lines = []
    for b, path in enumerate(branches(parents), 1):
        parts = [f"{' '.join(f'`{label(rec.drafted[u])}`' for u in nodes)} — {_verb(where)} **{where}**"
                 for where, nodes in _runs(path, rec.seen_in)]
        lines.append((f"Branch {b}: " if rec.is_tree else "") + "; then ".join(parts))
    return lines



def block_rows(rec: StepRecord, label) -> list[dict]:
    """Block verification's weights beside the token-wise tests for the same drafts, one row per draft: the same
    uniform eta_i, token-wise's bar min(1, p/q) and block's h_i (kept: X_1..X_tau, tau the last i with eta_i <= h_i)."""
    b = rec.block
    if b is None:
        return []
    w = b.weights
    return [{"position": i + 1, "draft": label(rec.drafted[i]), "uniform η": b.draws[i],
             "token-wise bar min(1, p/q)": min(1.0, w.ratios[i]), "block: backed p_i": w.backed[i],
             "block weight h_i": w.h[i], "kept": i < rec.n_accepted} for i in range(len(w.h))]


def block_summary(rec: StepRecord) -> str:
    b = rec.block
    if b is None or rec.greedy:
        return ("Temperature 0: block verification keeps the same prefix as token-wise (the drafts equal to the "
                "target's argmax).") if b is not None else ""
    return (f"Block verification kept **{rec.n_accepted}** of {rec.n_drafted} drafts; token-wise verification, "
            f"with the same uniforms, would have kept **{b.token_wise_kept}**. Block stops at the last position "
            "whose uniform falls under its weight h_i, not at the first failed test, and then draws the correction "
            "from norm(max(0, p_i · p − q)) (Sun et al. 2024, arXiv 2403.10444).")
