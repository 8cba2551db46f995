"""Plotly figures for the losslessness lab. Pure: tensors in, figures out."""
from __future__ import annotations

import plotly.graph_objects as go

P, Q, EMP, RES = "#4c78a8", "#e4572e", "#54a24b", "#b279a2"


def toy(p, q, res, labels: list[str]) -> go.Figure:
    """p, q, min(p, q) (the kept mass) and the residual over a toy vocabulary."""
    import torch

    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=p.tolist(), name="p (target)", marker_color=P))
    fig.add_trace(go.Bar(x=labels, y=q.tolist(), name="q (draft)", marker_color=Q))
    fig.add_trace(go.Bar(x=labels, y=torch.minimum(p, q).tolist(), name="min(p, q)", marker_color="#9d9d9d"))
    fig.add_trace(go.Bar(x=labels, y=res.tolist(), name="residual norm(max(0, p − q))", marker_color=RES))
    fig.update_layout(barmode="group", height=330, yaxis_title="probability", margin=dict(t=20, b=10, l=10, r=10),
                      legend=dict(orientation="h", y=-0.2))
    return fig


def histogram(freq, p, q, labels: list[str], trials: int) -> go.Figure:
    """Share of each token among the emitted tokens, next to p and q."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=p.tolist(), name="p (target)", marker_color=P))
    fig.add_trace(go.Bar(x=labels, y=freq.tolist(), name=f"speculative output ({trials} trials)",
                         marker_color=EMP))
    fig.add_trace(go.Bar(x=labels, y=q.tolist(), name="q (draft)", marker_color=Q, opacity=0.6))
    fig.update_layout(barmode="group", height=340, yaxis_title="share", margin=dict(t=20, b=10, l=10, r=10),
                      legend=dict(orientation="h", y=-0.2))
    return fig


def convergence(sim) -> go.Figure:
    """Total variation distance of the output's histogram from p and from q as trials grow."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=sim.checkpoints, y=sim.tv_to_p, mode="lines+markers", name="distance to p",
                             line_color=P))
    fig.add_trace(go.Scatter(x=sim.checkpoints, y=sim.tv_to_q, mode="lines+markers", name="distance to q",
                             line_color=Q))
    fig.update_layout(height=320, xaxis_type="log", xaxis_title="trials",
                      yaxis_title="total variation distance", margin=dict(t=20, b=10, l=10, r=10),
                      legend=dict(orientation="h", y=1.1))
    return fig


def sibling_histogram(freq, p, law, labels: list[str], trials: int, cands: list[int]) -> go.Figure:
    """Tree sampling by hand: the output's shares next to p and to the law the chosen rule follows; the sibling
    candidates are marked ★ on the axis."""
    xs = [("★ " if i in cands else "") + lab for i, lab in enumerate(labels)]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=xs, y=p.tolist(), name="p (target)", marker_color=P))
    fig.add_trace(go.Bar(x=xs, y=freq.tolist(), name=f"output ({trials} trials)", marker_color=EMP))
    fig.add_trace(go.Scatter(x=xs, y=law.tolist(), mode="markers", name="what this rule's output follows",
                             marker=dict(symbol="line-ew-open", size=28, color="#333", line_width=2)))
    fig.update_layout(barmode="group", height=340, yaxis_title="share", margin=dict(t=20, b=10, l=10, r=10),
                      legend=dict(orientation="h", y=-0.2))
    return fig


def sampled_siblings(freq, p, law, labels: list[str], trials: int, mode: str) -> go.Figure:
    """Sampled siblings: the counted output beside p and the closed form of the chosen draw mode."""
    return closed_vs_counted(freq, p.tolist(), [float(x) for x in law], labels, trials, "p (target)", mode)


def closed_vs_counted(freq, p: list, law: list, labels: list[str], trials: int, p_name: str, case: str) -> go.Figure:
    """The counted output (`trials` draws) beside p (named p_name) and the closed form of the output under `case`."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=p, name=p_name, marker_color=P))
    fig.add_trace(go.Bar(x=labels, y=law, name=f"closed form, {case}", marker_color="#9d9d9d"))
    fig.add_trace(go.Bar(x=labels, y=freq.tolist(), name=f"counted ({trials} draws)", marker_color=EMP))
    fig.update_layout(barmode="group", height=330, yaxis_title="share of emitted tokens",
                      margin=dict(t=20, b=10, l=10, r=10), legend=dict(orientation="h", y=-0.2))
    return fig


def alpha_vs_temperature(rows: list[dict], temps) -> go.Figure:
    """α (kept ÷ tested) against temperature, one line per method (top-p = 1)."""
    fig = go.Figure()
    for m in dict.fromkeys(r["method"] for r in rows):
        pts = [r for r in rows if r["method"] == m and r["top_p"] == 1.0 and r["T"] in temps]
        fig.add_trace(go.Scatter(x=[r["T"] for r in pts], y=[r["alpha"] for r in pts], mode="lines+markers",
                                 name=m))
    fig.update_layout(height=320, xaxis_title="temperature T (0 = greedy)",
                      yaxis_title="α (chance a tested draft is kept)", yaxis_range=[0, 1.02],
                      margin=dict(t=20, b=10, l=10, r=10), legend=dict(orientation="h", y=-0.25))
    return fig


def warped_output(freq, target, law, labels: list[str], trials: int, case: str) -> go.Figure:
    """Mismatched warping: the counted output beside the target's warped p and the closed form."""
    return closed_vs_counted(freq, target.tolist(), law.tolist(), labels, trials, "p at T (what the server promised)",
                             case)
