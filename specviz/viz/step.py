"""Figures and text for one decode step, built from StepRecords alone (pure; no Streamlit).

p is the target's distribution, q the draft's (the papers' names). At temperature 0 the records'
p_top hold the softmax at T=1 that each argmax is taken from; the rule in force is "same argmax".
"""
from __future__ import annotations

import html
from collections.abc import Callable

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from specviz.core import fmt as F
from specviz.core.records import StepRecord
from specviz.core.verify import residual

P_COLOR, Q_COLOR, R_COLOR = "#1f77b4", "#ff7f0e", "#2ca02c"
ORIGIN_COLORS = {"accepted": "#c7e9c0", "correction": "#fdd0a2", "bonus": "#c6dbef", "own": "#e0e0e0"}
ORIGIN_WORDS = {"accepted": "accepted draft", "correction": "correction (target's own token after a rejection)",
                "bonus": "bonus (target's own token after a fully accepted draft)",
                "own": "target only (nothing was drafted: one token per pass, as in plain decoding)"}
MAX_BARS = 12

Label = Callable[[int], str]


def token_label(tokenizer, token_id: int) -> str:
    """One token as readable text: spaces as '␣', newlines as '↵', tabs as '→'."""
    if tokenizer is None:
        return f"#{token_id}"
    s = tokenizer.decode([int(token_id)])
    s = s.replace(" ", "␣").replace("\n", "↵").replace("\t", "→")
    return s if s else f"#{token_id}"


def _tops(rec: StepRecord, i: int) -> tuple[dict[int, float], dict[int, float]]:
    p = dict(zip(rec.p_top[i].ids, rec.p_top[i].probs))
    q = {t: v for t, v in zip(rec.q_top[i].ids, rec.q_top[i].probs) if v > 0} if i < len(rec.q_top) else {}
    return p, q


def status(rec: StepRecord, i: int) -> str:
    if i >= len(rec.decisions):
        return "not tested (an earlier position was rejected)"
    return "accepted" if rec.decisions[i] else "rejected"


def _unique_labels(ids: list[int], label: Label) -> list[str]:
    out, seen = [], {}
    for t in ids:
        s = label(t)
        seen[s] = seen.get(s, 0) + 1
        out.append(s if seen[s] == 1 else f"{s} (#{t})")  # two ids can print alike
    return out


def pq_figure(rec: StepRecord, positions: list[int], label: Label) -> go.Figure:
    """p vs q over the top tokens at each drafted position in `positions` (0-based), the drafted token highlighted:
    one figure, two panels a row (one plotly chart draws faster in the browser than one per position)."""
    rows = -(-len(positions) // 2)                       # positions: at least one (pq_charts draws none without)
    titles = [f"Position {i + 1}: drafted “{label(rec.drafted[i])}” — {status(rec, i)}" for i in positions]
    fig = make_subplots(rows=rows, cols=min(2, len(positions)), subplot_titles=titles, vertical_spacing=0.36 / rows,
                        horizontal_spacing=0.08)
    p_name = "p (target, softmax at T=1)" if rec.greedy else "p (target)"
    q_name = "q (lookup: all mass on its guess)" if rec.q_deterministic else "q (draft)"
    for n, i in enumerate(positions):
        p, q = _tops(rec, i)
        x = int(rec.drafted[i])
        ids = sorted(set(p) | set(q) | {x}, key=lambda t: -max(p.get(t, 0.0), q.get(t, 0.0)))[:MAX_BARS]
        if x not in ids:
            ids[-1] = x
        ticks = [f"<b>▶{s}</b>" if t == x else s for t, s in zip(ids, _unique_labels(ids, label))]
        at = dict(row=n // 2 + 1, col=n % 2 + 1)
        fig.add_trace(go.Bar(name=p_name, x=ticks, y=[p.get(t) for t in ids], marker_color=P_COLOR,
                             legendgroup="p", showlegend=n == 0,
                             hovertemplate="%{x}: p = %{y:.3f}<extra></extra>"), **at)
        fig.add_trace(go.Bar(name=q_name, x=ticks, y=[q.get(t, 0.0) for t in ids], marker_color=Q_COLOR,
                             legendgroup="q", showlegend=n == 0,
                             hovertemplate="%{x}: q = %{y:.3f}<extra></extra>"), **at)
        j = ids.index(x)
        fig.add_vrect(x0=j - 0.5, x1=j + 0.5, fillcolor="#ffd54f", opacity=0.3, line_width=0, layer="below", **at)
        fig.update_yaxes(range=[0, 1.05], title_text="probability" if n % 2 == 0 else None, **at)
        fig.update_xaxes(tickangle=-30, **at)
    fig.update_annotations(font_size=13)
    fig.update_layout(barmode="group", height=300 * rows, margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.25 / rows))
    return fig


def residual_figure(rec: StepRecord, label: Label, top: int = 8) -> go.Figure | None:
    """At a rejection: p, q and the residual norm(max(0, p - q)) the correction is drawn from."""
    if rec.p_rejected is None or rec.q_rejected is None:
        return None
    p, q = rec.p_rejected.float(), rec.q_rejected.float()  # (V,), (V,)
    r = residual(p, q)                                     # (V,)
    ids: list[int] = []
    for dist in (r, p, q):
        for t in torch.topk(dist, top).indices.tolist():
            if dist[t] > 0 and t not in ids:
                ids.append(t)
    if rec.next_token not in ids:
        ids.append(rec.next_token)
    ids = sorted(ids, key=lambda t: -float(r[t]))[: MAX_BARS]
    names = _unique_labels(ids, label)
    ticks = [f"<b>★{n}</b>" if t == rec.next_token else n for t, n in zip(ids, names)]
    fig = go.Figure([
        go.Bar(name="p (target)", x=ticks, y=[float(p[t]) for t in ids], marker_color=P_COLOR),
        go.Bar(name="q (lookup: one-hot)" if rec.q_deterministic else "q (draft)", x=ticks,
               y=[float(q[t]) for t in ids], marker_color=Q_COLOR),
        go.Bar(name="residual norm(max(0, p − q))", x=ticks, y=[float(r[t]) for t in ids], marker_color=R_COLOR),
    ])
    fig.update_layout(
        title=dict(text=f"Rejected at position {rec.n_accepted + 1}: the correction “{label(rec.next_token)}” "
                        "is drawn from the residual", font_size=14),
        barmode="group", height=320, margin=dict(l=10, r=10, t=40, b=10), yaxis_title="probability",
        legend=dict(orientation="h", y=-0.25), xaxis_tickangle=-30)
    return fig


def decision_figure(rec: StepRecord, label: Label) -> go.Figure | None:
    """Sampled mode: each tested position's draw r against its threshold min(1, p(x)/q(x))."""
    if rec.greedy or not rec.decisions:
        return None
    n = len(rec.decisions)
    xs = [f"{i + 1}: {label(rec.drafted[i])}" for i in range(n)]
    thr = [min(1.0, r) for r in rec.ratios[:n]]
    colors = ["#2ca02c" if d else "#d62728" for d in rec.decisions]
    fig = go.Figure([
        go.Bar(name="threshold min(1, p(x)/q(x))", x=xs, y=thr, marker_color=colors, opacity=0.55,
               text=[f"{t:.3g}" for t in thr], textposition="outside"),
        go.Scatter(name="uniform draw r", x=xs, y=[float(d) for d in rec.draws[:n]], mode="markers",
                   marker=dict(symbol="diamond", size=14, color="black")),
    ])
    fig.update_layout(title=dict(text="Accept when r < threshold", font_size=14), height=260,
                      yaxis_range=[0, 1.05], margin=dict(l=10, r=10, t=40, b=10),
                      legend=dict(orientation="h", y=-0.3))
    return fig


def as_cells(rows: list[dict]) -> list[dict]:
    """Rows as a static table shows them: numbers to 4 decimals, a missing value as '–' (never a raw None)."""
    return F.cells(rows, ".4f")


def decision_rows(rec: StepRecord, label: Label) -> list[dict]:
    """One row per drafted position: the token, p(x), q(x), the test and its outcome."""
    rows = []
    for i, x in enumerate(rec.drafted):
        p, q = _tops(rec, i)
        tested = i < len(rec.decisions)
        row = {"position": i + 1, "drafted": label(x)}
        if rec.greedy:
            am = rec.p_top[i].ids[0] if i < len(rec.p_top) else None
            row.update({"target argmax": label(am) if am is not None else "?",
                        "p(x) at T=1": p.get(x), "same argmax?": status(rec, i)})
        else:
            ratio = rec.ratios[i] if tested else None
            qx = q.get(x, 1.0 if rec.q_deterministic else None)
            row.update({"p(x)": (ratio * qx) if (ratio is not None and qx is not None) else p.get(x),
                        "q(x)": qx, "p(x)/q(x)": ratio,
                        "r": rec.draws[i] if tested else None, "decision": status(rec, i)})
        rows.append(row)
    return rows


def text_html(steps: list[StepRecord], label: Label) -> str:
    """The generated text, each token coloured by origin; hovering shows its step."""
    spans = []
    for s in steps:
        for t, origin in zip(s.emitted, s.origins()):
            txt = html.escape(label(t).replace("␣", " ").replace("↵", "↵\n").replace("→", "\t"))
            spans.append(f'<span title="step {s.index + 1} · {ORIGIN_WORDS[origin].split(" (")[0]}" '
                         f'style="background:{ORIGIN_COLORS[origin]};border-radius:3px;'
                         f'padding:0 1px;margin:0 1px 0 0">{txt}</span>')
    body = "".join(spans) or "<i>(nothing generated yet)</i>"
    return (f'<div style="white-space:pre-wrap;font-family:monospace;line-height:1.8;'
            f'font-size:0.95rem">{body}</div>')


def legend_html() -> str:
    style = "border-radius:3px;padding:1px 6px"
    return " ".join(f'<span style="background:{c};{style}">{ORIGIN_WORDS[o].split(" (")[0]}</span>'
                    for o, c in ORIGIN_COLORS.items())


def passes_figure(steps: list[StepRecord]) -> go.Figure:
    """Tokens emitted per target pass, stacked by origin: the run at a glance."""
    xs = [s.index + 1 for s in steps]
    acc = [s.origins().count("accepted") for s in steps]
    cor = [s.origins().count("correction") for s in steps]
    bon = [s.origins().count("bonus") for s in steps]
    own = [s.origins().count("own") for s in steps]
    fig = go.Figure([
        go.Bar(name="accepted drafts", x=xs, y=acc, marker_color="#74c476"),
        go.Bar(name="correction", x=xs, y=cor, marker_color="#fd8d3c"),
        go.Bar(name="bonus", x=xs, y=bon, marker_color="#6baed6"),
        go.Bar(name="target only (nothing drafted)", x=xs, y=own, marker_color="#bdbdbd"),
    ])
    fig.update_layout(barmode="stack", height=220, margin=dict(l=10, r=10, t=30, b=10),
                      title=dict(text="Tokens committed by each target pass", font_size=14),
                      xaxis_title="step (= target pass)", yaxis_title="tokens",
                      legend=dict(orientation="h", y=-0.45))
    if not steps:  # drawn before a run: an empty frame that fills in as the run goes
        fig.update_xaxes(range=[0.5, 8.5], dtick=1)
        fig.update_yaxes(range=[0, 4])
        fig.add_annotation(text="no target pass yet: press One step or Play", showarrow=False,
                           x=4.5, y=2, font=dict(color="#888"))
    return fig
