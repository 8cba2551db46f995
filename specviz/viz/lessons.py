"""Charts of two lessons (pure; no Streamlit): the recycling table filling over a session (teach/recycling.py) and
block against token-wise verification (teach/blockverify.py)."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots


def filling_figure(rows, tree_nodes: int, title: str = "") -> go.Figure:
    """rows: teach.recycling.filling's PassRow per target pass. Left axis: table rows when the pass drafted;
    right axis: the share of the tree the table could fill; a dotted line where each request starts."""
    x = [r.pass_in_session for r in rows]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=x, y=[r.table_rows for r in rows], mode="lines", name="table rows (token ids)",
                             line=dict(color="#4c78a8")), secondary_y=False)
    fig.add_trace(go.Scatter(x=x, y=[r.hit for r in rows], mode="markers", name=f"nodes read ÷ {tree_nodes}",
                             marker=dict(color="#e4572e", size=5)), secondary_y=True)
    seen = set()
    for r in rows:
        if r.request not in seen:
            seen.add(r.request)
            fig.add_vline(x=r.pass_in_session - 0.5, line=dict(dash="dot", color="#999"))
            fig.add_annotation(x=r.pass_in_session, y=1.02, yref="paper", yanchor="bottom", text=r.request,
                               showarrow=False, xanchor="left", font=dict(size=11))
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=60, b=10), legend=dict(orientation="h", y=-0.25),
                      title=dict(text=title, font=dict(size=12)))
    fig.update_xaxes(title="target pass, over the whole session")
    fig.update_yaxes(title="rows in the table", secondary_y=False, rangemode="tozero")
    fig.update_yaxes(title="share of the tree filled", secondary_y=True, range=[0, 1.05], tickformat=".0%",
                     tickvals=[0, 0.25, 0.5, 0.75, 1.0], showgrid=False)
    return fig


def toy_figure(rows) -> go.Figure:
    """rows: teach.blockverify.toy_rows. Per draft: the drafts each rule keeps given it, bars side by side."""
    drafts = [r["draft"] for r in rows]
    fig = go.Figure([go.Bar(x=drafts, y=[r["token"] for r in rows], name="token-wise", marker_color="#9ecae1"),
                     go.Bar(x=drafts, y=[r["block"] for r in rows], name="block", marker_color="#3182bd")])
    fig.update_layout(barmode="group", height=280, margin=dict(l=10, r=10, t=30, b=10),
                      legend=dict(orientation="h", y=1.15),
                      xaxis=dict(title="the draft X₁X₂ (its chance under q in the table)"),
                      yaxis=dict(title="drafts kept, expected"))
    return fig


def block_runs_figure(rows, title: str = "") -> go.Figure:
    """rows: teach.blockverify.BlockComparison.rows. τ per seed, token-wise beside block."""
    fig = go.Figure()
    for v, colour in (("token-wise", "#9ecae1"), ("block", "#3182bd")):
        mine = [r for r in rows if r["verification"] == v]
        fig.add_trace(go.Bar(x=[f"seed {r['seed']}" for r in mine], y=[r["tokens per pass τ"] for r in mine], name=v,
                             marker_color=colour))
    fig.update_layout(barmode="group", height=280, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=1.12), title=dict(text=title, font=dict(size=12)),
                      yaxis=dict(title="tokens per pass τ", rangemode="tozero"))
    return fig
