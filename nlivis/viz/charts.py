"""Bar charts over analysis tables: class probabilities per model. (Training curves and accuracy dots are
Vega-Lite specs: `nlivis.viz.vega.curves`, `nlivis.viz.vega.errors`.)"""
from __future__ import annotations

from typing import Mapping, Sequence

import plotly.graph_objects as go

from nlivis.viz.common import BELOW_LEGEND


BAR_TEXT_MAX_MODELS = 3
"""Above this many models the values are left to the hover: printed over narrow bars they overlap."""


def probability_bars(probabilities: Mapping[str, Sequence[float]], labels: Sequence[str], title: str = "class probabilities",
                     colours: Mapping[str, str] | None = None) -> go.Figure:
    """One group of bars per class, one bar per model (in its colour from `colours`), so models compare side by side."""
    print_values = len(probabilities) <= BAR_TEXT_MAX_MODELS
    figure = go.Figure()
    for model, probs in probabilities.items():
        values = [float(p) for p in probs]
        if len(values) != len(labels):
            raise ValueError(f"{model}: {len(values)} probabilities for {len(labels)} labels {list(labels)}")
        figure.add_trace(go.Bar(
            x=list(labels), y=values, name=str(model), text=[f"{v:.2f}" for v in values] if print_values else None,
            textposition="outside", hovertemplate="%{x}: %{y:.3f}", marker=_marker(colours, model),
            meta={"kind": "table", "records": [{"model": model, "label": l, "probability": v} for l, v in zip(labels, values)]},
        ))
    figure.update_layout(title=title, barmode="group", yaxis={"range": [0, 1.1], "title": "probability"},
                         height=300, margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend=BELOW_LEGEND)
    return figure


def _marker(colours: Mapping[str, str] | None, name: object) -> dict | None:
    """The marker of a model's series: its colour on every page (`nlivis.viz.common.model_colours`)."""
    colour = (colours or {}).get(str(name))
    return {"color": colour} if colour else None
