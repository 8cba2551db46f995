"""Charts of the break-even calculator (pure; formulas from specviz.core.costmodel)."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly import colors as px_colors

from specviz.core import costmodel as be

K_CURVES = (1, 2, 4, 8, 16)


def speedup_vs_alpha(k: int, c: float, v: be.VCost, alpha: float | None = None,
                     ks: tuple[int, ...] = K_CURVES, points: int = 101) -> go.Figure:
    """Predicted speedup against α (the chance a tested draft is kept), one curve per k (the chosen k drawn thick)."""
    alphas = [i / (points - 1) for i in range(points)]
    fig = go.Figure()
    for kk in sorted(set(ks) | {k}):
        fig.add_trace(go.Scatter(
            x=alphas, y=[be.speedup(a, kk, c, v) for a in alphas], mode="lines", name=f"k = {kk}",
            line=dict(width=4 if kk == k else 1.5),
            hovertemplate=f"k = {kk}<br>α = %{{x:.2f}}<br>speedup %{{y:.2f}}×<extra></extra>"))
    fig.add_hline(y=1.0, line_dash="dash", line_color="gray", annotation_text="plain decoding",
                  annotation_position="bottom right")
    if alpha is not None:
        fig.add_vline(x=alpha, line_dash="dot", line_color="black", annotation_text=f"α = {alpha:.2f}",
                      annotation_position="top left")
    fig.update_layout(title=dict(text="Speedup vs α, the chance a tested draft is kept", font_size=14), height=360,
                      xaxis_title="α (chance a tested draft is kept)", yaxis_title="predicted speedup (×)",
                      margin=dict(l=10, r=10, t=40, b=10))
    return fig


def speedup_vs_k(alpha: float, c: float, v: be.VCost, k: int | None = None, k_max: int = 16) -> go.Figure:
    """Predicted speedup against draft length at one α; the best k marked."""
    ks = list(range(0, k_max + 1))
    ys = [be.speedup(alpha, kk, c, v) for kk in ks]  # k = 0 is plain decoding: 1.0
    kb, sb = be.best_k(alpha, c, v, k_max)
    fig = go.Figure([go.Scatter(x=ks, y=ys, mode="lines+markers", name=f"α = {alpha:.2f}",
                                hovertemplate="k = %{x}<br>speedup %{y:.2f}×<extra></extra>")])
    # the label sits on the side with room, inside the plot (never cut at an edge)
    fig.add_trace(go.Scatter(x=[kb], y=[sb], mode="markers+text", name="best k",
                             marker=dict(size=16, symbol="star", color="#d62728"), cliponaxis=False,
                             text=[f"best k = {kb}: {sb:.2f}×"],
                             textposition="top right" if kb <= k_max / 2 else "top left"))
    if k is not None:
        fig.add_vline(x=k, line_dash="dot", line_color="black", annotation_text=f"k = {k}",
                      annotation_position="bottom right")
    fig.add_hline(y=1.0, line_dash="dash", line_color="gray")
    lo, hi = min(ys + [1.0]), max(ys + [1.0])
    fig.update_yaxes(range=[lo - 0.05 * (hi - lo + 0.1), hi + 0.2 * (hi - lo + 0.1)])  # room for the label
    fig.update_layout(title=dict(text=f"Speedup vs draft length k at α = {alpha:.2f}", font_size=14),
                      height=360, xaxis_title="draft length k (0 = plain decoding)",
                      yaxis_title="predicted speedup (×)", margin=dict(l=10, r=10, t=40, b=10),
                      showlegend=False)
    return fig


def v_figure(table: dict[int, float] | None, constant: float | None = None, k_max: int = 16) -> go.Figure:
    """The verification cost v(k) in use: the measured table, or a flat constant."""
    fig = go.Figure()
    if table:
        ks = sorted(table)
        spread = getattr(table, "spread", {})  # passcost.VTable: IQR over the measuring rounds
        err = dict(type="data", array=[(spread.get(k) or 0) / 2 for k in ks], visible=True) if spread else None
        fig.add_trace(go.Scatter(x=ks, y=[table[k] for k in ks], mode="lines+markers", name="measured v(k)",
                                 error_y=err))
    if constant is not None:
        fig.add_trace(go.Scatter(x=[0, k_max], y=[constant, constant], mode="lines", name="constant v",
                                 line=dict(dash="dash")))
    fig.update_layout(title=dict(text="Verification cost v(k) (one plain step = 1)", font_size=14),
                      height=260, xaxis_title="k", yaxis_title="v(k)", margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.35))
    return fig


def per_position_figure(a: list[float], alpha: float | None) -> go.Figure:
    """Per-position acceptance a_i of a measured run, with the flat line independence would give
    (a_i = alpha at every i). Rising bars = bursty acceptance; falling = later guesses worse."""
    xs = list(range(1, len(a) + 1))
    fig = go.Figure([go.Bar(x=xs, y=a, name="measured a_i", marker_color="#1f77b4",
                            hovertemplate="position %{x}<br>a_i = %{y:.2f}<extra></extra>")])
    if alpha is not None:
        fig.add_hline(y=alpha, line_dash="dash", line_color="#d62728",
                      annotation_text=f"independent: every a_i = α = {alpha:.2f}", annotation_position="top left")
    fig.update_layout(title=dict(text="Per-position acceptance a_i", font_size=14), height=300,
                      xaxis_title="draft position i", yaxis_title="a_i = P(kept | earlier kept)",
                      yaxis_range=[0, 1.08], xaxis=dict(tickmode="linear", dtick=1),
                      margin=dict(l=10, r=10, t=40, b=10), showlegend=False)
    return fig


def families_figure(curves: dict[str, float], k: int, v: be.VCost, points: int = 101) -> go.Figure:
    """Predicted speedup against α at draft length k, one curve per family ({name: c}), each break-even α marked."""
    alphas = [i / (points - 1) for i in range(points)]
    fig = go.Figure()
    colours = px_colors.qualitative.Plotly
    for i, (name, c) in enumerate(curves.items()):
        colour = colours[i % len(colours)]
        fig.add_trace(go.Scatter(x=alphas, y=[be.speedup(a, k, c, v) for a in alphas], mode="lines",
                                 name=f"{name} (c = {c:.2f})", line=dict(color=colour),
                                 hovertemplate=f"{name}<br>α = %{{x:.2f}}<br>speedup %{{y:.2f}}×<extra></extra>"))
        a0 = be.breakeven_alpha(k, c, v)
        if a0 is not None:
            fig.add_trace(go.Scatter(x=[a0], y=[1.0], mode="markers", showlegend=False,
                                     marker=dict(size=11, color=colour, line=dict(width=1, color="black")),
                                     hovertemplate=f"{name}: breaks even at α = {a0:.2f}<extra></extra>"))
    fig.add_hline(y=1.0, line_dash="dash", line_color="gray", annotation_text="plain decoding",
                  annotation_position="bottom right")
    fig.update_layout(title=dict(text=f"Speedup vs α for each family at k = {k}", font_size=14), height=380,
                      xaxis_title="α (chance a tested draft is kept)", yaxis_title="predicted speedup (×)",
                      margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.25))
    return fig


def drafters_figure(points: dict[str, tuple[float, float | None, float]], k: int, v: be.VCost) -> go.Figure:
    """The families chart with one curve per measured drafter ({label: (c, α, measured speedup)}), each drafter's
    measured (α, speedup) drawn on its own curve's colour as a star."""
    fig = families_figure({name: c for name, (c, _, _) in points.items()}, k, v)
    colours = px_colors.qualitative.Plotly
    for i, (name, (c, alpha, sp)) in enumerate(points.items()):
        if alpha is None:
            continue
        fig.add_trace(go.Scatter(x=[alpha], y=[sp], mode="markers", showlegend=False,
                                 marker=dict(size=14, symbol="star", color=colours[i % len(colours)],
                                             line=dict(width=1, color="black")),
                                 hovertemplate=f"{name} measured<br>α = {alpha:.2f}, c = {c:.2f}<br>"
                                               f"speedup {sp:.2f}×<extra></extra>"))
    fig.update_layout(title=dict(text=f"Each drafter on the break-even chart at k = {k}: curve = predicted from its c, "
                                      "star = measured", font_size=14))
    return fig
