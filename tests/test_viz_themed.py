"""Streamlit's plotly look written into the figure the browser is sent (nlivis.viz.themed)."""
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from nlivis.viz.themed import DARK, LIGHT, for_browser


def strip_and_bars() -> go.Figure:
    """A gate strip's shape: bars over a heatmap on a colour axis, float32 numbers, a trace's meta, a title."""
    figure = make_subplots(rows=2, cols=1)
    figure.add_trace(go.Bar(y=np.array([0.1, 0.25], dtype=np.float32), meta={"kind": "table"}), row=1, col=1)
    figure.add_trace(go.Heatmap(z=np.array([[0.5, 0.3333]], dtype=np.float32), coloraxis="coloraxis"), row=2, col=1)
    figure.update_layout(title="a strip", coloraxis={"cmin": 0}, paper_bgcolor="#123456",
                         yaxis={"showgrid": False, "tickfont": {"size": 9}})
    return figure


def test_the_browser_gets_no_template_plain_lists_and_a_revision_of_its_content():
    figure = strip_and_bars()
    sent = json.loads(pio.to_json(for_browser(figure).to_dict(), validate=False))
    assert sent["layout"]["template"] is None
    go.Figure(sent)  # every value valid
    assert sent["layout"]["datarevision"] == for_browser(strip_and_bars()).layout.datarevision  # built again: the same
    other = strip_and_bars().update_layout(title="another strip")
    assert for_browser(other).layout.datarevision != sent["layout"]["datarevision"]
    assert sent["data"][0]["y"] == [0.1, 0.25] and sent["data"][1]["z"] == [[0.5, 0.3333]]  # float32, shortest digits
    assert "meta" not in sent["data"][0] and figure.data[0].meta == {"kind": "table"}  # the CSV still reads it
    assert figure.layout.template.layout is not None and figure.layout.datarevision is None  # `figure` untouched


def test_the_look_fills_what_the_figure_leaves_unset_and_keeps_what_it_sets():
    layout = go.Figure(for_browser(strip_and_bars()).to_dict()).to_dict()["layout"]  # validated by plotly.py
    assert layout["paper_bgcolor"] == "#123456" and layout["plot_bgcolor"] == LIGHT["background"]
    assert layout["title"]["text"] == "a strip" and layout["title"]["font"]["weight"] == "bold"
    assert layout["yaxis"]["tickfont"] == {"size": 9, "color": LIGHT["text"]}
    assert layout["coloraxis"]["cmin"] == 0 and layout["coloraxis"]["colorbar"]["thickness"] == 16
    assert layout["xaxis2"]["automargin"] and layout["xaxis2"]["showgrid"] is False  # every subplot's axes


def test_grid_zero_line_and_tick_colours_go_only_where_plotly_draws_them():
    """Set on an axis, these colours turn its grid, zero line or ticks on; a template's only colour them."""
    layout = for_browser(strip_and_bars()).to_dict()["layout"]
    assert "gridcolor" not in layout["yaxis"]  # showgrid False; its zero line plotly draws all the same:
    assert layout["yaxis"]["zerolinecolor"] == LIGHT["grid"]
    assert "gridcolor" not in layout["xaxis"]  # the bars' categories: plotly draws no grid there
    assert layout["yaxis2"]["tickcolor"] == LIGHT["grid"] and "tickcolor" not in layout["yaxis"]  # heatmap: ticks
    assert layout["yaxis2"]["gridcolor"] == LIGHT["grid"] and "minor" not in layout["yaxis2"]


def test_dark_readers_get_the_dark_look():
    dark, light = (for_browser(strip_and_bars(), dark=d).to_dict()["layout"] for d in (True, False))
    assert dark["plot_bgcolor"] == DARK["background"] != light["plot_bgcolor"]
    assert dark["font"]["color"] == DARK["text"] and dark["colorway"] == DARK["colourway"]


def test_a_clickable_chart_gets_the_modes_streamlit_would_set_after_mounting():
    points = for_browser(strip_and_bars(), selection=("points",)).to_dict()["layout"]
    assert (points["clickmode"], points["hovermode"], points["dragmode"]) == ("event+select", "closest", "pan")
    boxes = for_browser(strip_and_bars(), selection=("box", "lasso")).to_dict()["layout"]
    assert (boxes["clickmode"], boxes["dragmode"]) == ("event", "select")
    assert "clickmode" not in for_browser(strip_and_bars()).to_dict()["layout"]  # not clickable: left to plotly
