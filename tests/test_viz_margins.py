"""Margins fitted to a figure's axis labels before the browser draws it (nlivis.viz.margins)."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nlivis.viz.common import empty_figure
from nlivis.viz.margins import fit_margins, text_width


def test_longer_labels_get_wider_margins_and_short_ones_keep_the_layouts():
    short = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]), layout={"margin": {"l": 200, "b": 200}})
    assert fit_margins(short).layout.margin.l == 200 and short.layout.margin.b == 200  # never narrowed
    bare = go.Figure(go.Scatter(x=[1, 2], y=[1, 2]), layout={"margin": {"l": 10, "b": 10}})
    bare.update_xaxes(showticklabels=False)
    bare.update_yaxes(showticklabels=False)
    assert fit_margins(bare).layout.margin.l == 10 and bare.layout.margin.b == 10  # nothing beside its axes
    assert fit_margins(empty_figure("nothing")).layout.margin.l is None  # invisible axes ask for nothing

    def bottom(labels: list[str], angle: float) -> int:
        figure = go.Figure(go.Heatmap(z=[[1] * len(labels)]), layout={"margin": {"l": 10, "b": 10}})
        figure.update_xaxes(tickmode="array", tickvals=list(range(len(labels))), ticktext=labels, tickangle=angle,
                            title="tokens")
        return fit_margins(figure).layout.margin.b

    assert bottom(["a", "b"], 0) == bottom(["a", "contradiction"], 0) < bottom(["a", "contradiction"], -45)
    assert bottom(["a", "contradiction"], -45) < bottom(["a", "contradiction"], -90)


def test_percent_and_category_labels_are_measured_and_inner_subplots_push_nothing():
    percent = go.Figure(go.Bar(x=["gcnn-snli-small", "amn"], y=[0.7, 0.6]), layout={"margin": {"l": 10, "b": 10}})
    percent.update_yaxes(range=[0, 1], tickformat=".0%")
    plain = go.Figure(go.Bar(x=["gcnn-snli-small", "amn"], y=[0.7, 0.6]), layout={"margin": {"l": 10, "b": 10}})
    plain.update_yaxes(range=[0, 1])
    assert fit_margins(percent).layout.margin.l > fit_margins(plain).layout.margin.l > 10  # "100%" is wider than "1"
    assert percent.layout.margin.b > 10  # the category labels of an x axis the layout never set

    grid = make_subplots(rows=1, cols=2)
    grid.add_trace(go.Bar(x=[0], y=[1]), row=1, col=1)
    grid.add_trace(go.Bar(x=[0], y=[1]), row=1, col=2)
    grid.update_layout(margin={"l": 10})
    grid.update_yaxes(tickmode="array", tickvals=[1], ticktext=["x" * 30], col=2)  # labels of the right subplot
    assert fit_margins(grid).layout.margin.l < text_width("x" * 30, 12)
