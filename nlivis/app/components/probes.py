"""Error analysis's behavioural-tests tab: the CheckList-style suite of the loaded models' task (`analysis.probes`,
the `probe` command's) run on every loaded model with progress, kept for the server's life; a test × model table
of failure rates with Wilson 95% intervals, grouped by capability; a clicked cell lists that model's failing
cases, and a case opens as a pair in the Pair explorer (stepping through the same failing cases; its Edits tab edits it)."""
from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST
from nlivis.app import cache, paths, state
from nlivis.app.cache import analyses as cached_analyses, suites
from nlivis.app.components import controls, figures, pair_list, samples
from nlivis.app.components.frame import caption_note
from nlivis.app.text import md, short_names
from nlivis.viz.vega.errors import accuracy_dots

CASE_COLUMNS = ["case", "premise", "hypothesis", "expected", "predicted", "before edit", "original premise",
                "original hypothesis", "source"]
COLUMN_WIDTHS = {"capability": 150, "test": 240, "type": 45, "generator": 85, "cases": 50}
MODEL_COLUMN_WIDTH = 128
"""Fixed pixel widths: the table reads the same for any suite, and a test can find a model's column."""
PROGRESS_STEPS = ("probe: spaCy", "probe: predicting")
"""Progress messages that mark a step of a run (spaCy once, then one per model), after building the suite."""


def rate_text(entry: dict[str, Any]) -> str:
    """'12.7% [8.1, 19.4]' (failure rate and its Wilson 95% interval), or '—' for a test without cases."""
    if entry["rate"] is None:
        return "—"
    low, high = entry["interval"]
    return f"{100 * entry['rate']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def rate_table(record: dict[str, Any]) -> pd.DataFrame:
    """One line per test (capability, test, type, generator, cases), one column per model with its failure rate."""
    names = list(record["checkpoints"])
    rows = []
    for test in record["tests"]:
        row = {"capability": test["capability"], "test": test["name"], "type": test["type"],
               "generator": test["generator"], "cases": test["cases"]}
        row.update({name: rate_text(test["by_model"][name]) for name in names})
        rows.append(row)
    return pd.DataFrame(rows)


def rate_dots_frame(record: dict[str, Any]) -> pd.DataFrame:
    """Long table (test, model, rate, interval, cases) for the failure-rate dots."""
    rows = [{"test": f"{test['capability']} · {test['name']}", "model": name, "rate": entry["rate"],
             "ci_low": entry["interval"][0], "ci_high": entry["interval"][1], "count": test["cases"]}
            for test in record["tests"] for name, entry in test["by_model"].items() if entry["rate"] is not None]
    return pd.DataFrame(rows)


def run_with_progress(models: Sequence[cache.Model], per_test: int) -> tuple[dict | None, str | None]:
    """The `probe --json` record of the suite on `models` (run now, with a progress bar, unless kept), or why not."""
    run, _ = cached_analyses.probe_results(models, per_test)
    if run is not None:
        return run.record(), None
    bar = st.progress(0.0, text="building the suite …")
    steps, done = 1 + len(models), [0]

    def advance(message: str) -> None:
        if message.startswith(PROGRESS_STEPS):
            done[0] += 1
        bar.progress(min(1.0, done[0] / (steps + 1)), text=message.removeprefix("probe: "))

    run, error = cached_analyses.probe_results(models, per_test, compute=True, progress=advance)
    bar.empty()
    return (None, error) if run is None else (run.record(), None)


def section(page: str, models: Sequence[cache.Model]) -> None:
    st.subheader("Behavioural tests")
    st.caption("CheckList's test types (Ribeiro et al., 2020) with nlivis's own templates and lexicons: MFT cases have "
               "a label logic fixes; INV and DIR cases are dev pairs changed by the edit engine, failing when the "
               "prediction changes (INV) or misses the edit's label or direction (DIR). *generator* says what built a "
               "test: `engine` — the same edit engine or lexicons as `train --augment`, so a model augmented with them "
               "is tested on its own generator; `independent` — written without them. Only independent tests and "
               "held-out files speak for a fix. The same suite as "
               "`python -m nlivis probe CK … --suite nli|paraphrase --data-dir DATA --seed 1`.")
    root = paths.data_root()
    per_test = controls.number(page, "probe_cases", "Cases per test (at most)", DEFAULT_CASES_PER_TEST, 10, 1000,
                               step=10)
    if root is None:
        caption_note("No data folder: only the template (MFT) tests run; the INV / DIR tests edit dev pairs from the "
                     "data folder set on Home.")
    if not samples.computed(page, "Run the suite", f"reads the suite kept on disk (built once per machine, by the app "
                            f"after a launch or else by this run), then predicts every case with the {len(models)} "
                            f"loaded model(s), each model's predictions kept on disk", str(per_test),
                            name="probes_run"):
        st.info("Run the suite to see each model's failure rate per test. It is built once per machine (half a "
                "minute of CPU), by the app after a launch or by a run that comes sooner; five models new to it then "
                "take about 20 s of CPU, a model that has run it answers at once, also after a restart.")
        return
    record, error = run_with_progress(models, per_test)
    if record is None:
        st.error(md(error))
        return
    names = list(record["checkpoints"])
    table = rate_table(record)
    cases = sum(int(c) for c in table["cases"])
    st.markdown(f"**{record['suite']} suite** · {len(table)} tests · {cases:,} cases · failure rate % "
                "[Wilson 95% interval]. Click a model's cell to list its failing cases.")
    off = record.get("switched_off") or {}
    if off:
        st.caption(f":material/block: {len(off)} tests are off by default, built from edit kinds whose hand-judged "
                   "expected labels or grammar fall short of the targets (`python -m nlivis audit`; `probe "
                   "--include-off` runs them): " + "; ".join(md(name) for name in off))
    widths = {column: st.column_config.Column(width=width) for column, width in COLUMN_WIDTHS.items()}
    widths.update({name: st.column_config.Column(label, width=MODEL_COLUMN_WIDTH, help=name)
                   for name, label in short_names(names).items()})
    event = st.dataframe(table, key=f"{page}_probes_table", on_select="rerun", selection_mode="single-cell",
                         hide_index=True, width="stretch", column_config=widths, height=36 + 35 * len(table))
    clicked = list(getattr(getattr(event, "selection", None), "cells", []) or [])
    if state.new_event(f"{page}_probes_table", clicked) and clicked:
        line, column = clicked[0]
        state.remember(page, "probe_test", str(table["test"].iloc[int(line)]), "")
        if column in names:
            state.remember(page, "probe_model", column, "")
    overlaps(record)
    test = controls.kept(page, "probe_test", "")
    model = controls.kept(page, "probe_model", "")
    found = next((t for t in record["tests"] if t["name"] == test), None)
    if found is None or model not in names:
        st.caption(":material/touch_app: Click a model's cell in the table to list the cases it fails.")
    else:
        failing(page, models, per_test, found, model)
    figures.show(accuracy_dots(rate_dots_frame(record), "test", accuracy="rate", baseline=None, axis_title="failure rate",
                               colours={m.name: m.colour for m in models},
                               title=f"failure rate per test ({record['suite']} suite, Wilson 95% intervals)"),
                 f"{page}_probes_dots", f"probes_{record['suite']}")


def overlaps(record: dict[str, Any]) -> None:
    """How many dev-built cases share text with each model's training split: one caption per distinct count,
    naming its models (the five snli-small models share a split, so one line)."""
    said: dict[str, list[str]] = {}
    for name, entry in record["checkpoints"].items():
        overlap = entry.get("training_overlap") or {}
        if not overlap.get("cases_checked"):
            continue
        if not overlap.get("checked"):
            text = (f"overlap of the {overlap['cases_checked']:,} dev-built cases with the training split not checked "
                    f"({md(str(overlap.get('reason')))})")
        else:
            text = (f"of {overlap['cases_checked']:,} dev-built cases, {overlap['pairs']} pairs, {overlap['premises']} "
                    f"premises and {overlap['hypotheses']} hypotheses occur in the training split "
                    f"({md(str(overlap['split']))}): those are not held out")
        said.setdefault(text, []).append(name)
    for text, names in said.items():
        caption_note(f"{md(', '.join(names))}: {text}.")


def failing(page: str, models: Sequence[cache.Model], per_test: int, test: dict[str, Any], model: str) -> None:
    entry = test["by_model"][model]
    st.markdown(f"**{md(model)} fails {entry['failures']} of {test['cases']} cases of “{md(test['name'])}”** "
                f"({md(test['capability'])}, {md(test['type'])}: {md(test['description'])})")
    run = cached_analyses.options_digest(suites.probe_options(models, per_test))
    ref = state.ListRef.of("probes", models=",".join(m.name for m in models), run=run, test=test["name"],
                           model=model, via="probe")
    pair_list.show(page, "probe_cases", ref, sortable=False, columns=CASE_COLUMNS)
