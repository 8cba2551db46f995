"""Plotly figures for the comparison and the k/n sweeps. Pure: records and rows in, figures out."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from specviz.core import fmt as F

DRAFT, VERIFY = "#e4572e", "#4c78a8"
PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#9d755d", "#eeca3b"]
METRICS = [("draft_acceptance_rate", "draft acceptance rate α̂"), ("tokens_per_pass", "tokens per pass τ"),
           ("speedup", "measured speedup ×")]


def summary_bars(rows: list[dict]) -> go.Figure:
    """Acceptance, tokens per pass and speedup per method (x) and workload (colour)."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=[t for _, t in METRICS], horizontal_spacing=0.07)
    for i, w in enumerate(dict.fromkeys(r["workload"] for r in rows)):
        rs = [r for r in rows if r["workload"] == w]
        shown = False
        for c, (key, _) in enumerate(METRICS, start=1):
            keep = [r for r in rs if r[key] is not None]
            if not keep:
                continue
            fig.add_trace(go.Bar(x=[r["setting"] for r in keep], y=[r[key] for r in keep], name=w,
                                 legendgroup=w, showlegend=not shown, marker_color=PALETTE[i % len(PALETTE)],
                                 hovertemplate="%{x}: %{y:.2f}<extra>" + w + "</extra>"), row=1, col=c)
            shown = True
    fig.add_hline(y=1.0, line_dash="dot", line_color="grey", row=1, col=3)
    fig.update_layout(barmode="group", height=400, margin=dict(t=40, b=10, l=10, r=10),
                      legend=dict(title_text="workload"))
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    return fig


def per_position(runs) -> go.Figure:
    """Acceptance by draft position a_i for each (workload, method, k) run that drafted."""
    fig = go.Figure()
    for r in runs:
        a = r.summary.per_position_acceptance
        if r.method == "plain" or not a:
            continue
        fig.add_trace(go.Scatter(x=list(range(1, len(a) + 1)), y=a, mode="lines+markers",
                                 name=f"{r.workload} · {r.label}"))
    fig.update_layout(height=320, xaxis_title="draft position i", yaxis_title="a_i",
                      yaxis_range=[0, 1.05], margin=dict(t=20, b=10, l=10, r=10))
    return fig


def timeline(runs) -> go.Figure:
    """Per step: drafting time stacked on verification time (ms), one row per run. A draft model's
    serial drafting shows as a tall orange band; lookup's is invisible."""
    runs = list(runs)
    fig = make_subplots(rows=len(runs), cols=1, shared_xaxes=True, vertical_spacing=0.3 / max(1, len(runs)),
                        subplot_titles=[f"{r.workload} · {r.label}" for r in runs])
    for i, r in enumerate(runs, start=1):
        x = [s.index for s in r.steps]
        fig.add_trace(go.Bar(x=x, y=[1000 * s.draft_s for s in r.steps], name="draft", marker_color=DRAFT,
                             legendgroup="d", showlegend=i == 1), row=i, col=1)
        fig.add_trace(go.Bar(x=x, y=[1000 * s.verify_s for s in r.steps], name="verify (target pass)",
                             marker_color=VERIFY, legendgroup="v", showlegend=i == 1), row=i, col=1)
        fig.update_yaxes(title_text="ms", row=i, col=1)
    fig.update_xaxes(title_text="step (target pass)", row=len(runs), col=1)
    fig.update_layout(barmode="stack", height=150 + 130 * len(runs), margin=dict(t=40, b=10, l=10, r=10),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=1, xanchor="right"))
    fig.update_annotations(font_size=12)
    return fig


def time_split(rows: list[dict]) -> go.Figure:
    """Total drafting vs verification seconds per method (one workload's medians)."""
    fig = go.Figure()
    lab = [f"{r['setting']} · {r['workload']}" for r in rows]
    fig.add_trace(go.Bar(y=lab, x=[r["draft_s"] for r in rows], name="draft", orientation="h",
                         marker_color=DRAFT))
    fig.add_trace(go.Bar(y=lab, x=[r["verify_s"] for r in rows], name="verify", orientation="h",
                         marker_color=VERIFY))
    fig.update_layout(barmode="stack", height=120 + 28 * len(rows), xaxis_title="seconds",
                      margin=dict(t=20, b=10, l=10, r=10), legend=dict(orientation="h", y=1.1))
    return fig


def greedy_vs_sampled(rows: list[dict]) -> go.Figure:
    """Lookup's tokens per pass and speedup per workload, greedy vs sampled (rows carry 'mode')."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["lookup tokens per pass τ", "lookup speedup ×"])
    for i, mode in enumerate(dict.fromkeys(r["mode"] for r in rows)):
        rs = [r for r in rows if r["mode"] == mode and r["method"] == "lookup"]
        for c, key in enumerate(["tokens_per_pass", "speedup"], start=1):
            fig.add_trace(go.Bar(x=[r["workload"] for r in rs], y=[r[key] for r in rs], name=mode,
                                 legendgroup=mode, showlegend=c == 1, marker_color=PALETTE[i]), row=1, col=c)
    fig.add_hline(y=1.0, line_dash="dot", line_color="grey")
    fig.update_layout(barmode="group", height=330, margin=dict(t=40, b=10, l=10, r=10))
    return fig


# -- sweeps -------------------------------------------------------------------------------------
def sweep_lines(points) -> go.Figure:
    """Acceptance, tokens per pass and speedup against k; one line per n (lookup) or one line."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=[t for _, t in METRICS], horizontal_spacing=0.07)
    for i, n in enumerate(dict.fromkeys(p.n for p in points)):
        ps = sorted((p for p in points if p.n == n), key=lambda p: p.k)
        axis = ps[0].axis if ps and hasattr(ps[0], "axis") else "n"
        name = f"{axis}={n:g}" if n is not None else "measured"
        vals = [[p.summary.draft_acceptance_rate for p in ps], [p.summary.tokens_per_pass for p in ps],
                [p.speedup for p in ps]]
        for c, y in enumerate(vals, start=1):
            fig.add_trace(go.Scatter(x=[p.k for p in ps], y=y, mode="lines+markers", name=name,
                                     legendgroup=name, showlegend=c == 1, line_color=PALETTE[i % len(PALETTE)]),
                          row=1, col=c)
    fig.add_hline(y=1.0, line_dash="dot", line_color="grey", row=1, col=3)
    fig.update_xaxes(title_text="k", dtick=1)
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    fig.update_layout(height=360, margin=dict(t=40, b=10, l=10, r=10))
    return fig


def sweep_rows(points) -> list[dict]:
    """The sweep's table: one row per point, named by the settings it ran with (Setting.describe(short=True))."""
    return [{"setting": p.setting.describe(short=True) if p.setting else "–", "k": p.k, p.axis: p.n,
             "draft_acceptance_rate": p.summary.draft_acceptance_rate, "tokens_per_pass": p.summary.tokens_per_pass,
             "speedup": p.speedup, "tokens_per_s": p.summary.tokens_per_s, "target_passes": p.summary.target_passes}
            for p in points]


def sweep_heatmap(points, metric: str = "speedup") -> go.Figure:
    """k × n heatmap of a metric (lookup sweeps)."""
    ks = sorted({p.k for p in points})
    ns = sorted({p.n for p in points if p.n is not None})
    val = {(p.k, p.n): (p.speedup if metric == "speedup" else getattr(p.summary, metric)) for p in points}
    z = [[val.get((k, n)) for k in ks] for n in ns]
    fig = go.Figure(go.Heatmap(x=ks, y=ns, z=z, colorscale="RdYlGn" if metric == "speedup" else "Blues",
                               zmid=1.0 if metric == "speedup" else None,
                               text=[[("" if v is None else f"{v:.2f}") for v in row] for row in z],
                               texttemplate="%{text}", colorbar=dict(title=metric.replace("_", " "))))
    axis = getattr(points[0], "axis", "n") if points else "n"
    fig.update_layout(height=340, xaxis_title="k (draft length)",
                      yaxis_title="n (match length)" if axis == "n" else axis.replace("_", " "),
                      xaxis=dict(dtick=1), yaxis=dict(dtick=1 if axis in ("n", "max_depth") else None,
                                                      type="category" if axis != "n" else None),
                      margin=dict(t=20, b=10, l=10, r=10))
    return fig


def checkpoint_bars(rows: list[dict]) -> go.Figure:
    """Tokens per pass of each proposer on the base target and on its fine-tune."""
    fig = go.Figure()
    for lab in ("base", "fine-tuned"):
        rs = [r for r in rows if r["target"] == lab and r["method"] != "plain"]
        fig.add_trace(go.Bar(x=[r["method"] for r in rs], y=[r["tokens_per_pass"] for r in rs],
                             name=f"{lab} target", text=[f"{r['tokens_per_pass']:.2f}" for r in rs]))
    fig.update_layout(barmode="group", height=320, yaxis_title="tokens per pass τ",
                      margin=dict(t=20, b=10, l=10, r=10))
    return fig


TABLE_COLS = ["workload", "kind", "setting", "alpha", "draft_acceptance_rate", "tokens_per_pass", "tokens_per_s",
              "speedup", "spread", "target_passes", "repetition"]
DASH_WHY = ("–: α where no draft was tested (plain drafts nothing) and α̂ where none was drafted; spread with a "
            "single repeat (there is nothing to spread over). setting: lookup's n and, with ≤, the most a method that "
            "sizes its own drafts may draft in one step.")


def table_rows(rows: list[dict]) -> list[dict]:
    """The comparison table as text: numbers to 2 decimals, '–' where a value does not exist (DASH_WHY)."""
    return F.cells(rows, cols=TABLE_COLS)
