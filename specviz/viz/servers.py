"""Acceptance as servers report it (teach/acceptance.py): accepted lengths per pass against the geometric law."""
from __future__ import annotations

import plotly.graph_objects as go


def acceptance_figure(v) -> go.Figure:
    """Bars: passes that kept exactly i drafts; markers: the count the geometric law of the measured α expects."""
    xs = list(range(len(v.histogram)))
    fig = go.Figure(go.Bar(x=xs, y=v.histogram, name="measured passes", marker_color="#4c78a8"))
    if v.alpha is not None:
        fig.add_trace(go.Scatter(x=xs, y=v.expected, mode="lines+markers", name=f"geometric law, α = {v.alpha:.2f}",
                                 line=dict(color="#e4572e")))
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=1.12),
                      xaxis=dict(title="drafts kept in the pass (accepted length)", dtick=1),
                      yaxis=dict(title="passes"))
    return fig
