"""The Pair explorer's Edits tab and Error analysis's behavioural tests, run headless with AppTest on the tiny
fixture checkpoints: the edits table with flips and expectations, a pinned edit with its alignments, difference
map and attributions, the URL keeping pair, tab and pin (a reload shows the same), one's own edit; the probe
table, a clicked cell's failing cases and one opening as a pair."""
from __future__ import annotations

from nlivis.analysis.edit_filters import OFF_BY_DEFAULT
from nlivis.analysis.edits import propose_edits
from nlivis.viz.vega.common import axis_labels
from tests.fixtures.app_checkpoints import APP_DATA
from tests.test_app_pages import (checkpoints, charts, click_table_row, list_lines, load_models, open_app,  # noqa: F401
                                  open_link, show, texts, vega_specs, vega_title)

EXPLORER = "pages/2_Pair_explorer.py"
ERRORS = "pages/5_Error_analysis.py"
TWO = ("gcnn-snli-small", "gcnn-no_forget_gate-snli-small")


def edits_tab(monkeypatch, tmp_path, checkpoints, row: int = 1, **extra: str):
    return open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, EXPLORER, split="snli_dev", pair=str(row),
                     models=",".join(TWO), tab="Edits", **extra)


def test_edits_tab_lists_every_edit_with_each_models_prediction_before_and_after(monkeypatch, tmp_path, checkpoints,
                                                                                  wordnet):
    app = edits_tab(monkeypatch, tmp_path, checkpoints)  # "… on a stage ." / "The man is asleep at home ." contradiction
    table = app.dataframe(key="explorer_edits_table").value
    expected = propose_edits("A man is playing a guitar on a stage .", "The man is asleep at home .", "contradiction")
    assert len(table) == len(expected) > 5
    assert list(table["kind"]) == [e.kind for e in expected]
    for name in TWO:  # "X → Y" with the flip mark exactly where the label changed
        for cell in table[name]:
            before, after = cell.split(" ")[0], cell.split(" ")[2]
            assert before in "ENC" and after in "ENC"
            assert ("⇄" in cell) == (before != after)
    swap = table[table["kind"] == "swap"].iloc[0]  # contradiction is symmetric: the swap keeps its label
    assert swap["expected"] != "none"
    assert "negation" in set(table["kind"]) and not set(table["kind"]) & set(OFF_BY_DEFAULT)
    assert app.query_params["tab"] == "Edits" and "pin" not in app.query_params
    assert "Click a row to pin" in texts(app, "caption")


def test_a_pinned_edit_shows_alignments_their_difference_and_attributions_and_survives_a_reload(
        monkeypatch, tmp_path, checkpoints, wordnet):
    app = edits_tab(monkeypatch, tmp_path, checkpoints)
    table = app.dataframe(key="explorer_edits_table").value
    line = next(i for i, kind in enumerate(table["kind"]) if kind == "substitution")
    app = click_table_row(app, "explorer_edits_table", line)
    assert app.query_params["pin"] == str(table["edit"].iloc[line])
    specs = vega_specs(app)
    assert not charts(app), "no plotly chart: its chunk costs every new tab ~1.3 s"
    titles = [vega_title(spec) for spec in specs]
    assert any("original" in t for t in titles) and any("edited −" in t for t in titles)
    difference = next(spec for spec in specs if "edited −" in vega_title(spec))
    changed = table["change"].iloc[line].split(" (")[0].replace(" → ", "→")
    cells = difference["layer"][0]["encoding"]
    marked = [(letter, tokens.index(changed)) for letter in ("x", "y")
              if changed in (tokens := axis_labels(cells[letter]["axis"]))]
    assert marked, changed  # the changed token on the shared axis, in bold, its row or column outlined
    letter, position = marked[0]
    assert f"[{position}]" in cells[letter]["axis"]["labelFontWeight"]["condition"]["test"]
    position_field = {"x": "column_position", "y": "row_position"}[letter]
    outlined = [value for layer in difference["layer"][1:] for value in layer["data"]["values"]]
    assert {position_field: position} in outlined, "its row or column outlined"
    assert sum("pair · grad_x_input" in t for t in titles) == 2  # attribution before and after
    assert "of |score| on the changed word" in texts(app, "caption")

    reloaded = edits_tab(monkeypatch, tmp_path, checkpoints, pin=app.query_params["pin"])
    assert [vega_title(spec) for spec in vega_specs(reloaded)] == titles


def test_a_new_pair_drops_the_pin_and_an_own_edit_is_predicted(monkeypatch, tmp_path, checkpoints, wordnet):
    app = edits_tab(monkeypatch, tmp_path, checkpoints, pin="0")
    assert app.query_params["pin"] == "0"
    app.text_input(key="explorer_own_hypothesis").set_value("The man is awake at home .")
    app.button(key="explorer_own_edit_add").click().run()
    table = app.dataframe(key="explorer_edits_table").value
    assert table["edit"].iloc[0] == "own" and table["change"].iloc[0].startswith("asleep → awake")
    assert table["expected"].iloc[0] == "none"
    assert app.query_params["own_hypothesis"] == "The man is awake at home ."

    app.number_input(key="explorer_pair_row").set_value(4)
    app.button(key="explorer_analyse_row").click().run()
    assert not app.exception, app.exception
    assert app.query_params["pair"] == "4" and "pin" not in app.query_params and "own_hypothesis" not in app.query_params


def probes_tab(monkeypatch, tmp_path, checkpoints, **extra: str):
    return open_link(monkeypatch, tmp_path, checkpoints, APP_DATA, ERRORS, models=",".join(TWO),
                     tab="Behavioural tests", probe_cases="10", **extra)


def test_probe_table_to_a_cells_failing_cases_to_a_pair_and_its_edits(monkeypatch, tmp_path, checkpoints, wordnet):
    from nlivis.analysis.significance import wilson_interval

    app = probes_tab(monkeypatch, tmp_path, checkpoints)
    assert "Run the suite" in texts(app, "info") and not app.dataframe  # nothing runs before the button
    app.button(key="errors_probes_run_button").click().run()
    assert not app.exception, app.exception
    table = app.dataframe(key="errors_probes_table").value
    assert list(table.columns) == ["capability", "test", "type", "generator", "cases", *TWO]
    assert set(table["generator"]) == {"engine", "independent"}
    assert len(table) >= 10 and set(table["type"]) >= {"MFT", "INV"}  # templates and edited fixture dev pairs
    assert app.query_params["probes_run"] == "10"
    # every cell is its failures' rate and Wilson interval (checked against the failing cases behind it)
    line = next(i for i in range(len(table)) if not table[TWO[0]].iloc[i].startswith("0.0%"))
    app.session_state["errors_probes_table"] = {"selection": {"rows": [], "columns": [], "cells": [[line, TWO[0]]]}}
    app.run()
    assert not app.exception, app.exception
    assert app.query_params["probe_model"] == TWO[0] and app.query_params["probe_test"] == table["test"].iloc[line]
    cases = list_lines(app, "errors_probe_cases_table")
    count = int(table["cases"].iloc[line])
    low, high = wilson_interval(len(cases), count)
    assert table[TWO[0]].iloc[line] == f"{100 * len(cases) / count:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
    assert set(cases.columns) >= {"premise", "hypothesis", "expected", "predicted"}
    assert len([spec for spec in vega_specs(app) if "failure rate per test" in spec["title"]]) == 1

    opened = click_table_row(app, "errors_probe_cases_table", 0)
    assert [t.value for t in opened.title] == ["Pair explorer"]
    assert opened.query_params["from"] == "probes" and opened.query_params["hypothesis"] == cases["hypothesis"].iloc[0]
    assert f"pair 1 of {len(cases)}" in texts(opened, "markdown")  # the explorer steps through the failing cases
    opened.session_state["explorer_tab"] = "Edits"  # and its Edits tab edits the case
    show(opened, EXPLORER)
    assert opened.query_params["tab"] == "Edits" and len(opened.dataframe(key="explorer_edits_table").value) > 0


def test_a_link_to_failing_cases_before_the_suite_ran_asks_for_the_run(monkeypatch, tmp_path, checkpoints):
    app = probes_tab(monkeypatch, tmp_path, checkpoints, probe_test="x", probe_model=TWO[0])
    assert "Run the suite" in texts(app, "info")
