"""The capstone's figures: measured tokens/s of every option per pool, the learner's choice and prediction marked;
and the match rule beside fixed k (tokens per pass and tokens/s). Pure: rows in, figures out."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

MINE, OTHER, BEST, GUESS = "#e4572e", "#9db4d0", "#4c78a8", "#222222"


def fleet_figure(pools: dict[str, list[dict]], best: dict[str, str], predicted: dict[str, float | None]) -> go.Figure:
    """One panel per pool: a bar per option (rows[0] is the learner's), the best fitting option darker, the
    learner's prediction as a line across its panel."""
    names = list(pools)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.05, shared_yaxes=True)
    for c, pool in enumerate(names, start=1):
        rows = pools[pool]
        colours = [MINE if i == 0 else BEST if r["label"] == best.get(pool) else OTHER for i, r in enumerate(rows)]
        xs = [("yours: " if i == 0 else "") + r["short"] for i, r in enumerate(rows)]
        fig.add_trace(go.Bar(x=xs, y=[r["tokens_per_s"] for r in rows],
                             marker_color=colours, showlegend=False, customdata=[r["label"] for r in rows],
                             hovertemplate="%{customdata}<br>%{y:.1f} tokens/s<extra>" + pool + "</extra>"),
                      row=1, col=c)
        if predicted.get(pool) is not None:
            fig.add_trace(go.Scatter(x=xs[:1], y=[predicted[pool]], mode="markers",
                                     marker=dict(symbol="diamond", size=12, color=GUESS), name="your prediction",
                                     showlegend=c == 1, legendgroup="guess"), row=1, col=c)
    fig.update_yaxes(title_text="tokens/s (measured)", row=1, col=1)
    fig.update_xaxes(tickangle=-45)
    fig.update_layout(height=460, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=1.15))
    return fig


def rule_figure(rows: list[dict]) -> go.Figure:
    """τ and tokens/s side by side for each row (the match rule, fixed k, plain)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["tokens per pass τ", "tokens/s"], horizontal_spacing=0.1)
    xs = [r["short"] for r in rows]
    fig.add_trace(go.Bar(x=xs, y=[r["tau"] for r in rows], marker_color=BEST, showlegend=False), row=1, col=1)
    fig.add_trace(go.Bar(x=xs, y=[r["tokens_per_s"] for r in rows], marker_color=MINE, showlegend=False), row=1, col=2)
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=40, b=10))
    return fig
