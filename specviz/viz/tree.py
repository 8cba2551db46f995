"""A draft tree and its attention mask, drawn from a StepRecord alone (pure; no Streamlit).

The root is the last committed token; each node is a draft token under its parent. Colours: the
accepted path, the nodes tested and rejected, and the nodes never tested (their parent was rejected,
or an older sibling was accepted first).
"""
from __future__ import annotations

import plotly.graph_objects as go

from specviz.core.records import StepRecord
from specviz.core.tree import depths, tree_mask
from specviz.viz.step import Label

NODE_COLORS = {"accepted": "#31a354", "rejected": "#de2d26", "untested": "#bdbdbd", "root": "#3182bd"}


def node_states(rec: StepRecord) -> list[str]:
    """'accepted' | 'rejected' | 'untested' for each drafted node."""
    state = ["untested"] * len(rec.drafted)
    for node, ok in zip(rec.tested, rec.decisions):
        state[node] = "accepted" if ok else "rejected"
    return state


def _rows(parents: list[int]) -> list[float]:
    """A vertical slot per node: leaves in depth-first order, parents centred over their children."""
    kids: dict[int, list[int]] = {}
    for i, par in enumerate(parents):
        kids.setdefault(par, []).append(i)
    y: dict[int, float] = {}
    nxt = [0.0]

    def place(u: int) -> float:
        ch = kids.get(u, [])
        if not ch:
            y[u] = nxt[0]
            nxt[0] += 1
        else:
            y[u] = sum(place(c) for c in ch) / len(ch)
        return y[u]

    place(-1)
    return [y[-1]] + [y[i] for i in range(len(parents))]


def seen_short(where: str) -> str:
    """A short tag for a node: 'prompt', 'output', 'req 2' (the first place when it was seen in several)."""
    first = where.split(",")[0].strip()
    if first.startswith("request "):
        return "req " + first.split()[1]
    return first.replace("this ", "")


def tree_figure(rec: StepRecord, label: Label, root_text: str = "context") -> go.Figure:
    """The step's draft as a tree, left to right by depth; the accepted path in green."""
    parents = rec.parents
    x = [0] + depths(parents)
    y = [-v for v in _rows(parents)]
    state = ["root"] + node_states(rec)
    fig = go.Figure()
    for i, par in enumerate(parents):
        on_path = state[i + 1] == "accepted"
        fig.add_trace(go.Scatter(x=[x[par + 1], x[i + 1]], y=[y[par + 1], y[i + 1]], mode="lines",
                                 line=dict(color=NODE_COLORS["accepted"] if on_path else "#d9d9d9",
                                           width=4 if on_path else 1.5),
                                 hoverinfo="skip", showlegend=False))
    seen = rec.seen_in if rec.seen_in and len(rec.seen_in) == len(rec.drafted) else None
    text = [root_text] + [label(t) + (f" · {seen_short(seen[i])}" if seen else "") for i, t in enumerate(rec.drafted)]
    where = [""] + ([f"; seen in {w}" for w in seen] if seen else [""] * len(rec.drafted))
    for s in ("root", "accepted", "rejected", "untested"):
        idx = [i for i, v in enumerate(state) if v == s]
        if not idx:
            continue
        fig.add_trace(go.Scatter(
            x=[x[i] for i in idx], y=[y[i] for i in idx], mode="markers+text", name=s,
            marker=dict(size=16, color=NODE_COLORS[s], line=dict(width=1, color="white")),
            text=[text[i] for i in idx], textposition="middle right",
            hovertext=[f"d{i}: “{label(rec.drafted[i - 1])}” (depth {x[i]}, {s}{where[i]})" if i
                       else "root: the last committed token"
                       for i in idx], hoverinfo="text"))
    fig.update_layout(height=max(260, 26 * (max((-v for v in y), default=0) + 2)),
                      margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=1.08),
                      xaxis=dict(title="depth (draft position)", dtick=1, range=[-0.3, max(x) + 0.9]),
                      yaxis=dict(visible=False))
    return fig


def mask_figure(rec: StepRecord, label: Label) -> go.Figure:
    """The tree attention mask of the step's verify pass: row = query position, column = key position
    (root and nodes; the cached context, visible to every row, is left out)."""
    m = tree_mask(rec.parents).int()                                    # (n+1, n+1)
    on_path = {0} | {i + 1 for i in rec.path}
    z = [[(2 if (r in on_path and c in on_path) else 1) if m[r, c] else 0 for c in range(len(m))]
         for r in range(len(m))]
    names = ["root"] + [f"d{i + 1}:{label(t)}" for i, t in enumerate(rec.drafted)]        # d1 = node 0
    fig = go.Figure(go.Heatmap(
        z=z, x=names, y=names, zmin=0, zmax=2, showscale=False, xgap=1, ygap=1,
        colorscale=[[0, "#f7f7f7"], [0.5, "#9ecae1"], [1, NODE_COLORS["accepted"]]],
        hovertemplate="query %{y}<br>key %{x}<extra></extra>"))
    fig.update_layout(height=max(300, 22 * len(names) + 120), margin=dict(l=10, r=10, t=10, b=10),
                      yaxis=dict(autorange="reversed", title="query (fed position)"),
                      xaxis=dict(title="key (may attend)", tickangle=-60))
    return fig
