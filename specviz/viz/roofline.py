"""The roofline chart (pure; the maths in specviz.core.roofline): attainable FLOP/s against arithmetic intensity,
log-log, one roof per machine with its ridge point, and the decode steps measured here placed on it."""
from __future__ import annotations

import plotly.graph_objects as go

from specviz.core import roofline as RL


def _roof(m: RL.Machine, xs: list[float], colour: str, dash: str | None = None) -> list[go.Scatter]:
    line = go.Scatter(x=xs, y=[RL.attainable(x, m) for x in xs], mode="lines", name=f"roof: {m.name}",
                      line=dict(color=colour, dash=dash, width=2),
                      hovertemplate="%{x:.3g} FLOP/byte<br>%{y:.3g} FLOP/s<extra></extra>")
    knee = go.Scatter(x=[m.ridge], y=[m.peak], mode="markers+text", name=f"ridge {m.ridge:.0f} FLOP/byte",
                      marker=dict(size=11, color=colour, symbol="diamond"), text=[f"ridge {m.ridge:.0f}"],
                      textposition="top center", cliponaxis=False, showlegend=False,
                      hovertemplate=f"{m.name}: ridge {m.ridge:.1f} FLOP/byte<extra></extra>")
    return [line, knee]


def roofline_figure(machines: list[RL.Machine], steps: list[dict], title: str) -> go.Figure:
    """Each machine's roof min(peak, I × bandwidth) with its ridge; `steps`: one line of points each,
    {"label", "intensity": [...], "flops_s": [...], "text": [...]}: decode steps measured here, FLOPs ÷ time."""
    xs_all = [x for s in steps for x in s["intensity"]]
    lo = min([0.5] + [x / 2 for x in xs_all])
    hi = max([4 * m.ridge for m in machines] + [2 * x for x in xs_all])
    n = 60
    xs = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
    fig = go.Figure()
    for m, colour, dash in zip(machines, ("#1f77b4", "#7f7f7f", "#2ca02c"), (None, "dash", "dot")):
        for tr in _roof(m, xs + [m.ridge], colour, dash):
            fig.add_trace(tr)
    for s, colour in zip(steps, ("#d62728", "#ff7f0e")):
        fig.add_trace(go.Scatter(x=s["intensity"], y=s["flops_s"], mode="lines+markers+text", name=s["label"],
                                 text=s.get("text"), textposition="bottom right", marker=dict(size=9, color=colour),
                                 line=dict(color=colour, width=1),
                                 hovertemplate="%{text}<br>%{x:.3g} FLOP/byte<br>%{y:.3g} FLOP/s<extra></extra>"))
    fig.update_xaxes(type="log", title="arithmetic intensity (FLOP per byte read)")
    fig.update_yaxes(type="log", title="FLOP/s")
    fig.update_layout(title=dict(text=title, font_size=14), height=440, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.22))
    return fig
