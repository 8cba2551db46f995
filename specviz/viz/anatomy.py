"""The causal mask of one verification pass as a grid (from teach.anatomy). Pure: data in, figure out."""
from __future__ import annotations

import plotly.graph_objects as go


def mask_figure(a, label) -> go.Figure:
    """Rows: output rows of the pass; columns: the cached context and the k + 1 fed tokens."""
    cols = [f"cache ({a.target_cache[0]} entries)"] + [f"{role.split(':')[0]} “{label(t)}”"
                                                       for _, t, role in a.fed]
    rows = [f"row {r.row} → pos {r.position}" for r in a.rows]
    text = [["sees" if v else "" for v in line] for line in a.mask]
    fig = go.Figure(go.Heatmap(z=a.mask, x=cols, y=rows, text=text, texttemplate="%{text}", showscale=False,
                               colorscale=[[0, "#f4f4f4"], [1, "#6baed6"]], zmin=0, zmax=1, xgap=2, ygap=2))
    fig.update_layout(height=90 + 34 * len(rows), margin=dict(l=10, r=10, t=30, b=10),
                      title=dict(text="Causal mask of the pass: what each output row can attend to", font_size=14),
                      yaxis=dict(autorange="reversed"), xaxis=dict(side="top", tickangle=0))
    return fig
