"""The Train page's before → after report: a changed checkpoint (an augmented run) judged against its
compute-matched control — the one its config.json names (`augmentation.control`), or any checkpoint of the same
protocol chosen by hand — on the select split's recorded predictions, the behavioural suite's independent tests
and every challenge file the two were evaluated on in the app (and any file attached here), overall and by
category. The same report as `scripts/augment_report.py` (`workflows.augment_report.build_report`): McNemar's
exact test, Holm over the lines of a table, significant regressions first, in red and named so; a clicked line
lists its pairs, which open in the Pair explorer with both checkpoints."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.challenge import OVERALL_GROUP
from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST, EVERY_TEMPLATE_CASE
from nlivis.app import cache, state
from nlivis.app.cache import analyses as cached_analyses
from nlivis.app.cache import challenge as cached_challenge, suites
from nlivis.app.components import challenge, controls, line_grid, lists, pair_list, probes
from nlivis.app.text import md
from nlivis.store.evaluations import evaluations_root
from nlivis.app.cache.run_memo import folder_stamp_in_run
from nlivis.store.files import file_stamp
from nlivis.workflows.augment_report import (INDEPENDENT_ONLY, AugmentReport, FileOutcomes, HeldOutFile, ReportRow,
                                             SIGNIFICANT, ReportSources, answers_text, build_report,
                                             control_seed_folders, field_values, held_out_file, outcomes,
                                             recorded_control)

REGRESSION = "regression"
"""The word that marks a significant regression (the red is not the only sign)."""
WITHIN_SEEDS = "worse, within seed spread"
"""The verdict of a significant loss that leaves the changed checkpoint no worse than the worst of the control's seeds
on the line's pairs."""
REGRESSION_STYLE = "background-color: #fde2e1; color: #9b1c1c"
SUITE = "behavioural suite"
FILES = "challenge files"


def section(page: str) -> None:
    """Pick the two checkpoints, run what is missing, and show the report with the pairs behind a clicked line."""
    st.subheader("Before → after: is the fix a fix?")
    st.caption("A changed checkpoint (e.g. an augmented run) against its compute-matched control on the same pairs: "
               "the select split's recorded predictions, the behavioural suite's *independent* tests (its engine tests "
               "are built like the augmentation, so they grade a model on its own generator) and every challenge file "
               "the two were evaluated on, by category. McNemar's exact test on the pairs only one of them gets right, "
               "Holm over the lines of a table. The same report as `python scripts/augment_report.py --pair CONTROL "
               "AUGMENTED`.")
    pair = chosen_pair(page)
    if pair is None:
        return
    models = loaded(pair)
    if models is None:
        return
    seeds = control_seeds(pair[0])
    files = held_out_files(page, models)
    evaluate_missing(page, [*models, *seeds], files)
    per_test = cases_per_test(page)
    probe_run(page, [*models, *seeds], per_test)
    report = cached_report(pair, models, seeds, files, per_test)
    for what in report.missing:
        st.caption(f":material/block: {md(what)}")
    show_report(page, report, [*models, *seeds], per_test)


def chosen_pair(page: str) -> tuple[Any, Any] | None:
    """(control, changed checkpoint) infos: the changed one picked (an augmented one by default), its control the
    one its config.json names, or any other checkpoint of its protocol chosen by hand (its own family listed first)."""
    found = {info.name: info for info in cache.scan_checkpoints().good}
    controlled = [name for name, info in found.items() if recorded_control(info.path) in found]
    if len(found) < 2:
        st.info("The report compares two checkpoints of one protocol; fewer than two are found.")
        return None
    left, right = st.columns(2)
    after = controls.select(page, "report_after", "Checkpoint judged (e.g. an augmented run)", list(found),
                            controlled[0] if controlled else next(iter(found)), where=left)
    recorded = recorded_control(found[after].path)
    same = [name for name, info in found.items() if name != after and info.protocol == found[after].protocol]
    same.sort(key=lambda name: found[name].model != found[after].model)  # its own family first (a stable sort)
    if not same:
        st.info(f"No other checkpoint of {md(found[after].protocol)} to compare {md(after)} with.")
        return None
    before = controls.select(page, "report_before", "Against", same, recorded if recorded in same else same[0],
                             where=right, format_func=lambda name: name + (" (its control in config.json)"
                                                                             if name == recorded else ""))
    if recorded is None:
        st.caption(f":material/info: {md(after)}'s config.json names no compute-matched control: the one compared is "
                   "chosen by hand. A fix is judged against a run of the same steps on the original pairs.")
    elif before != recorded:
        st.warning(f"{md(after)}'s compute-matched control is {md(recorded)}; {md(before)} is compared instead.")
    return found[before], found[after]


def loaded(pair: tuple[Any, Any]) -> list[cache.Model] | None:
    """Both checkpoints loaded (the suite and challenge files run them), or None after saying why not."""
    models = []
    for info in pair:
        model, error = lists.model_by_name(info.name)
        if model is None:
            st.error(md(error))
            return None
        models.append(model)
    return models


def control_seeds(control: Any) -> list[cache.Model]:
    """The control's other seeds found beside it (`control_seed_folders`), loaded: the report weighs each change
    against how far they differ on the same pairs."""
    good = {info.name for info in cache.scan_checkpoints().good}
    found = []
    for folder in control_seed_folders(Path(control.path)):
        model = lists.model_by_name(folder.name)[0] if folder.name in good else None
        if model is not None:
            found.append(model)
    if found:
        st.caption(f":material/casino: The control's other seed(s) {md(', '.join(m.name for m in found))} run beside "
                   "it: a significant loss that leaves the judged checkpoint no worse than the worst of the control's "
                   "seeds on the same pairs is shown as within seed spread, not as a regression.")
    return found


def held_out_files(page: str, models: Sequence[cache.Model]) -> list[HeldOutFile]:
    """Every challenge file either checkpoint was evaluated on in the app (its named evaluations whose files are
    still there), and one more attached here (a path or an upload, as the Error analysis page takes them)."""
    found: dict[tuple[Path, ...], None] = {}
    for model in models:
        for files in cached_challenge.earlier_evaluations([model]).values():
            found[tuple(files)] = None
    with st.expander("Attach another challenge file"):
        attached = challenge.chosen_files(page, models)
    if attached:
        found[tuple(attached)] = None
    return [held_out(files) for files in found]


def held_out(files: tuple[Path, ...]) -> HeldOutFile:
    """A file as the report runs it (`held_out_file`: by its categories when it has some)."""
    read, _ = cached_challenge.read_challenge(files)
    return held_out_file(files, field_values(read) if read is not None else {})


def evaluate_missing(page: str, models: Sequence[cache.Model], files: Sequence[HeldOutFile]) -> None:
    """A button that evaluates the checkpoints not yet evaluated on a listed file (kept as named evaluations)."""
    missing = []
    for held in files:
        read, _ = cached_challenge.read_challenge(held.files)
        if read is not None:
            missing += [(held, read, m) for m in models if cached_challenge.challenge_predictions(m, read)[1] is None]
    if not missing or not st.button(f"Evaluate the {len(missing)} missing checkpoint × file pair(s)",
                                    key=f"{page}_report_evaluate",
                                    help="each file's pairs go through spaCy once (cached), then each checkpoint; "
                                         "kept as a named evaluation in its folder"):
        return
    bar = st.progress(0.0, text="evaluating …")
    problems = []
    for done, (held, read, model) in enumerate(missing):
        bar.progress(done / len(missing), text=f"evaluating {model.name} on {held.name} …")
        problems += [f"{md(model.name)}: {md(p)}"
                     for p in cached_challenge.challenge_predictions(model, read, compute=True)[2:] if p]
    bar.empty()
    for problem in problems:
        st.error(problem)
    if not problems:
        st.rerun()  # drawn again without the button: nothing is missing now


def cases_per_test(page: str) -> int:
    """How many cases of each behavioural test the report runs: the suite's 110, or every template case, whose
    power a regression of a few points needs (`probes.EVERY_TEMPLATE_CASE`)."""
    return controls.radio(page, "report_cases", "Cases per behavioural test",
                          (DEFAULT_CASES_PER_TEST, EVERY_TEMPLATE_CASE), format_func=case_choice,
                          help="110 cases a test miss regressions of a few points that a held-out set of a thousand "
                               "pairs shows; every template case takes minutes more for a slow model")


def case_choice(per_test: int) -> str:
    return (f"{per_test} (the suite's)" if per_test == DEFAULT_CASES_PER_TEST
            else f"every template case (≤ {per_test:,})")


def probe_run(page: str, models: Sequence[cache.Model], per_test: int) -> None:
    """The behavioural suite on both checkpoints: kept in this server once run; a button runs it with progress."""
    run, _ = cached_analyses.probe_results(models, per_test)
    which = {2: "both", 3: "all three"}.get(len(models), f"all {len(models)}")
    if run is None and st.button(f"Run the behavioural suite on {which}", key=f"{page}_report_probes",
                                 help="builds the suite once (cached on disk), then predicts every case with both "
                                      "checkpoints; kept for this server's life"):
        _, error = probes.run_with_progress(models, per_test)
        if error:
            st.error(md(error))
        else:
            st.rerun()  # drawn again without the button, the suite's lines in the report


def sources(models: Sequence[cache.Model], seeds: Sequence[cache.Model], split: str, per_test: int) -> ReportSources:
    """What the report reads in the app: recorded predictions, the suite kept in this server (run with `per_test`
    cases a test, on both checkpoints and the control's other `seeds`), named evaluations."""
    everyone = [*models, *seeds]
    by_name = {m.name: m for m in everyone}

    def select(name: str) -> dict | None:
        found, error = cache.checkpoint_predictions(by_name[name].path, split)
        return None if error else outcomes(found)

    def suite() -> tuple[dict, str, str] | None:
        run, _ = cached_analyses.probe_results(everyone, per_test)
        return None if run is None else (run.record(), [m.name for m in everyone])

    def file(held: HeldOutFile) -> FileOutcomes | None:
        read, _ = cached_challenge.read_challenge(held.files)
        if read is None:
            return None
        found = [cached_challenge.challenge_predictions(m, read)[0] for m in everyone]
        if not all(found[:2]):
            return None
        seeded = tuple(outcomes(f) for f in found[2:]) if all(found[2:]) else ()
        return FileOutcomes(outcomes(found[0]), outcomes(found[1]), read.groups(held.group) if held.group else None,
                            control_seeds=seeded)

    return ReportSources(select, suite, file, tuple(m.name for m in seeds))


def cached_report(pair: tuple[Any, Any], models: Sequence[cache.Model], seeds: Sequence[cache.Model],
                  files: Sequence[HeldOutFile], per_test: int) -> AugmentReport:
    """The report, built once per state of the two folders (their named evaluations too), the files, the cases a
    test and whether the suite has run."""
    split = pair[1].select_split or pair[0].select_split
    everyone = [*models, *seeds]
    ran = cached_analyses.probe_results(everyone, per_test)[0] is not None
    key = (tuple((m.path, folder_stamp_in_run(m.path), file_stamp(evaluations_root(m.path))) for m in everyone),
           split, per_test, ran,
           tuple((held.files, tuple(file_stamp(f) for f in held.files), held.group) for held in files))
    return cache.memo("augment report", key, lambda: build_report(
        models[0].name, models[1].name, sources(models, seeds, split, per_test), files, select_split=split,
        probe_generators=INDEPENDENT_ONLY))


def lines(report: AugmentReport) -> list[tuple[str, ReportRow]]:
    """(table, row) in the order shown: every significant regression first, then each table's other rows."""
    regressions = report.regressions()
    return regressions + [(table, row) for table, rows in report.tables() for row in rows if not row.regression]


def line_id(table: str, row: ReportRow) -> str:
    """How a line is named (in the URL too): its table and row, or one of them when they are the same."""
    return row.name if row.name == table else f"{table} · {row.name}"


READABLE_COLUMNS = {"verdict": st.column_config.TextColumn(width="medium"),
                    "table": st.column_config.TextColumn(width="small"),
                    "line": st.column_config.TextColumn(width="medium")}
"""The verdict ("worse, within seed spread") and the line's name read whole, the table's name cut (a tooltip shows
it): the numbers up to the control seeds' range fit the page's width."""
FORMATS = {"before (%)": "{:.1f}", "after (%)": "{:.1f}", "change (points)": "{:+.2f}", "p (Holm)": "{:.2g}"}
"""How the table's numbers are written (the script's precision)."""


def report_frame(shown: Sequence[tuple[str, ReportRow]]) -> pd.DataFrame:
    """One line per row: its verdict in words, where it comes from, the accuracies and the test."""
    def verdict(row: ReportRow) -> str:
        if row.regression or row.worse:
            return REGRESSION if row.regression else WITHIN_SEEDS if row.loss_within_seeds else "worse"
        if row.comparison.right_after > row.comparison.right_before:
            return "significant gain" if row.p_holm < SIGNIFICANT else "better"
        return "same"

    return pd.DataFrame([{
        "verdict": verdict(row), "table": table, "line": row.name, "pairs": row.comparison.pairs,
        "before (%)": 100 * row.comparison.before, "after (%)": 100 * row.comparison.after,
        "change (points)": 100 * row.comparison.change, "p (Holm)": row.p_holm,
        "control seeds, worst–best (%)": ("{:.1f}–{:.1f}".format(*(100 * a for a in row.seed_range))
                                          if row.seed_range else None),
        "only before right": row.comparison.only_before_right, "only after right": row.comparison.only_after_right}
        for table, row in shown])


def show_report(page: str, report: AugmentReport, models: Sequence[cache.Model], per_test: int) -> None:
    """The verdict, the table (regressions in red, first) and the pairs behind the clicked line (`models`: the
    control, the changed checkpoint, then the control's other seeds the suite ran on)."""
    shown = lines(report)
    if not shown:
        st.info("Nothing to compare yet: run the suite or evaluate a challenge file above.")
        return
    found = report.regressions()
    if found:
        st.error(f"**{len(found)} significant regression(s)** of {md(report.after)} against {md(report.before)} "
                 f"(worse, Holm-adjusted p < 0.05, and worse than every seed of the control where it has other "
                 "seeds): " + "; ".join(md(line_id(*item)) for item in found))
    else:
        st.success(f"No significant regression of {md(report.after)} against {md(report.before)} in "
                   f"{len(shown)} lines.")
    frame = report_frame(shown)
    styled = frame.style.format(FORMATS).apply(
        lambda line: [REGRESSION_STYLE if line["verdict"] == REGRESSION else ""] * len(line), axis=1)
    table_key = f"{page}_report_table"
    event = st.dataframe(styled, key=table_key, on_select="rerun", selection_mode=line_grid.LINE_CLICKS,
                         hide_index=True, width="stretch", column_config=READABLE_COLUMNS)
    st.caption(f"*before*: {md(report.before)} · *after*: {md(report.after)} · accuracy on the line's pairs (a "
               "suite line: its cases passed). :material/touch_app: Click a line to list its pairs; a pair opens in "
               "the Pair explorer with both checkpoints, and the browser's Back returns here.")
    swap_table(report)
    picked, selection = line_grid.clicked_line(event)
    if state.new_event(table_key, selection) and picked is not None:
        state.remember(page, "report_line", line_id(*shown[picked]), "")
    chosen = controls.kept(page, "report_line", "")
    line = next((item for item in shown if line_id(*item) == chosen), None)
    if line is not None:
        pairs_behind(page, report, models, per_test, *line)


def swap_table(report: AugmentReport) -> None:
    """Whether each checkpoint tells the contradicting word swaps from the others, or only says contradiction more
    often (`analysis.swap_discrimination`): shown when the suite ran both groups of swaps."""
    if not report.swaps:
        return
    frame = pd.DataFrame([{"checkpoint": f"{name} ({role})",
                           "hits %": 100 * found.hit_rate, "false alarms %": 100 * found.false_alarm_rate,
                           "discrimination": 100 * found.discrimination,
                           "95% interval": "[{:+.1f}, {:+.1f}]".format(*(100 * end for end in found.interval))}
                          for role, name, found in report.labelled_swaps()])
    st.markdown("**Which one-word swaps contradict?**")
    st.dataframe(frame.style.format({"hits %": "{:.1f}", "false alarms %": "{:.1f}", "discrimination": "{:+.1f}"}),
                 hide_index=True, width="stretch")
    st.caption("Independent tests, no negation: contradiction answered on exclusive-word swaps (*hits*) and on "
               "hypernym and synonym swaps (*false alarms*). A bias towards contradiction moves both; only telling "
               "the swaps apart moves their difference (*discrimination*, 95% Newcombe interval).")


def pairs_behind(page: str, report: AugmentReport, models: Sequence[cache.Model], per_test: int, table: str,
                 row: ReportRow) -> None:
    """The pairs of one line, opening with both checkpoints: the select split's pairs the two label differently,
    a suite test's cases only one fails (`suite_list`), a file's (or category's) pairs only one gets right."""
    st.markdown(f"**The pairs behind “{md(line_id(table, row))}”**")
    names = [report.before, report.after]
    if table == report.select_split:
        ref = state.ListRef.of("disagreements", split=table, members=",".join(names), via="report")
    elif table == SUITE:
        if row.answers:
            st.caption(f"What the failures answered (expected → said: cases) — {md(report.before)}: "
                       f"{md(answers_text(row.answers[0]))}; {md(report.after)}: {md(answers_text(row.answers[1]))}.")
        ref = suite_list(page, models, per_test, row)
    else:
        held = next(f.file for f in report.files if table in (FILES, f"{f.file.name} by {f.file.group}")
                    and (table != FILES or f.file.name == row.name))
        read, _ = cached_challenge.read_challenge(held.files)
        field = held.group or next(iter(read.field_names() if read is not None else []), None)
        if field is None:
            st.info(f"{md(held.name)} has no field to list its pairs by.")
            return
        ref = state.ListRef.of("challenge", files=";".join(str(f) for f in held.files), field=field,
                               group=OVERALL_GROUP if table == FILES else row.name, model=report.after,
                               versus=report.before, via="report")
    if ref is not None:
        pair_list.show(page, "report_pairs", ref, sortable=False, open_models=names)


def suite_list(page: str, models: Sequence[cache.Model], per_test: int, row: ReportRow) -> state.ListRef | None:
    """The cases of one test of the line's capability (a choice when it has several) behind its change: those the
    changed checkpoint fails and its control passes (for a line that got better, the other way round), in the list
    the Error analysis page's suite opens."""
    run, _ = cached_analyses.probe_results(models, per_test)
    if run is None:
        return None
    tests = [t["name"] for t in run.record()["tests"]
             if t["capability"] == row.name and t["generator"] == row.generator]
    test = controls.select(page, "report_test", "Test", tests) if len(tests) > 1 else tests[0]
    digest = cached_analyses.options_digest(suites.probe_options(models, per_test))
    failing, passing = (models[0], models[1]) if row.comparison.right_after > row.comparison.right_before \
        else (models[1], models[0])
    return state.ListRef.of("probes", models=",".join(m.name for m in models), run=digest, test=test,
                            model=failing.name, versus=passing.name, via="report")
