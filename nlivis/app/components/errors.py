"""Error analysis: accuracy with 95% intervals and the majority baseline, per label and confusion matrices (a
clicked cell lists its pairs), every error of the split (sortable, filterable by confusion cell, tag, length and
unknown words, paged), accuracy by annotation tag with DIIN's Table 7, a challenge file by category, and behavioural
tests (`components.probes`)."""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.breakdown import overall_accuracy
from nlivis.analysis.pair_lists import UNKNOWN_FILTERS
from nlivis.app import cache, state
from nlivis.app.cache import figures as cached_figures
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import challenge, controls, figures, lists, pair_list, probes, samples, tag_breakdown
from nlivis.app.components.frame import protocol_notes, require_models
from nlivis.app.text import code, markdown_table, md, percent_formats
from nlivis.viz.vega.errors import CELL, CELL_FIELDS, accuracy_interval_bars
from nlivis.data.split_choice import split_label
from nlivis.store.evaluations import prediction_files

PAGE = "errors"
LIST_COLUMNS = ["row", "id", "gold", "predicted", "confidence", "length", "unknown", "tags", "premise", "hypothesis"]
ANY = "(any)"
TABS = ("Accuracy and confusions", "Every error", "By annotation tag (Table 7)", "Challenge set", "Behavioural tests")
"""Only the open tab is computed and drawn; the behavioural tests need no split, the others one split's predictions."""
NO_TAGS, GOLD, SAMPLE, EVERY = "none", "gold", "automatic (a sample)", "automatic (every pair: once, then on disk)"


def page(models: Sequence[cache.Model]) -> None:
    """The page over `models` described by their config.json (`frame.require_models(weights=False)`): the tabs
    of recorded predictions need no weights; the challenge set and the behavioural tests run the models, so they
    load them (`with_weights`)."""
    protocol_notes(models)
    tab, containers = controls.tabs(PAGE, "tab", TABS)  # only the open tab is computed and drawn
    with containers[TABS.index(tab)]:
        if tab == TABS[4]:
            probes.section(PAGE, with_weights())
        else:
            split_tab(models, tab)


def with_weights() -> list[cache.Model]:
    """The chosen models loaded (as every page that runs them has them)."""
    return require_models("challenge set and the behavioural tests")


def split_tab(models: Sequence[cache.Model], tab: str) -> None:
    """A tab over one split's recorded predictions (or the challenge set, which needs none)."""
    splits_by_model = {m.name: prediction_files(m.path) for m in models}
    all_splits = sorted({key for files in splits_by_model.values() for key in files})
    if not all_splits:
        st.info("The loaded checkpoints have no recorded prediction files (predictions_<split>.jsonl.gz, written when a "
                "checkpoint is trained). Evaluate them on any file in the challenge-set section below, or with "
                "`python -m nlivis evaluate CHECKPOINT --file PATH`.")
        challenge.section(PAGE, with_weights())
        state.stop()
    if tab == TABS[3]:
        challenge.section(PAGE, with_weights())
        return
    start, trained = cache.split_choice(models, all_splits)
    split = controls.select(PAGE, "split", "Evaluation split", all_splits, start,
                            format_func=lambda key: split_label(key, trained))
    samples.split_truncation(models, split)
    predictions: dict[str, list] = {}
    for model in models:
        if split not in splits_by_model[model.name]:
            st.caption(f"{md(model.name)}: no predictions for {md(split)}.")
            continue
        loaded, error = cache.checkpoint_predictions(model.path, split)
        if error:
            st.error(md(error))
        else:
            predictions[model.name] = loaded
    if not predictions:
        state.stop()
    shown = [m for m in models if m.name in predictions]
    if tab == TABS[0]:
        scores = {}
        for model in shown:  # tables, matrices and their figures: once per predictions file (`cache.split_scores`)
            score, error = cache.split_scores(model.path, split, model.labels)
            if score is None:
                st.error(md(error or ""))
            else:
                scores[model.name] = score
        accuracy(split, shown, {name: score.table for name, score in scores.items()})
        confusions(split, shown, scores)
    elif tab == TABS[1]:
        error_list(split, shown)
    else:
        tag_breakdown.section(PAGE, split, shown, predictions)


def accuracy(split: str, models: Sequence[cache.Model], predictions: dict[str, pd.DataFrame]) -> None:
    st.subheader("Accuracy")
    table = overall_accuracy(predictions)
    figures.show(accuracy_interval_bars(table, title=f"accuracy on {split} (95% intervals; dashed: majority label)",
                                        colours={m.name: m.colour for m in models}), "errors_overall", f"accuracy_{split}")
    # small tables as Markdown, not data grids: a grid's code held back the confusion matrix (`markdown_table`)
    st.markdown(markdown_table(list(table.columns), table.itertuples(index=False),
                               percent_formats(["accuracy", "ci_low", "ci_high", "majority_accuracy"])))


def confusions(split: str, models: Sequence[cache.Model], scores: dict[str, cache.SplitScores]) -> None:
    """The models' confusion matrices in one chart, each model's per-label scores below it; a clicked cell (kept in
    the view as `cell_model`, `cell_gold`, `cell_predicted`) lists its pairs below."""
    st.subheader("Per label and confusion matrices")
    normalize = controls.toggle(PAGE, "normalize", "Show rows as fractions of each gold label", False)
    labels_of = {m.name: m.labels for m in models}
    for name, score in scores.items():
        if score.problem:
            st.error(f"{md(name)}: {md(score.problem)}")
    drawn = {name: score for name, score in scores.items() if not score.problem}
    if drawn:
        figure = cached_figures.confusion_figure(drawn, normalize)
        event = figures.show(figure, "confusions", f"confusions_{split}", clickable=True)
        custom = figures.clicked_fields(figures.new_click("confusions", event, CELL), CELL_FIELDS)
        if custom and str(custom[0]) in drawn:
            for key, value in zip(("cell_model", "cell_gold", "cell_predicted"), custom):
                state.remember(PAGE, key, str(value), "")
        # per-label accuracy is the label's recall: one table for all models, the width of the page (a table per
        # model in three columns ran over its column's edge)
        first = next(iter(drawn.values())).per_label
        st.markdown(markdown_table(["model", *first.columns],
                                   [[name, *row] for name, score in drawn.items()
                                    for row in score.per_label.itertuples(index=False)],
                                   dict.fromkeys(["precision", "recall", "f1"], ".3f")))
    cell = {name: controls.kept(PAGE, name, "") for name in ("cell_model", "cell_gold", "cell_predicted")}
    if say_ignored_cell(cell, labels_of):
        cell = dict.fromkeys(cell, "")
    if cell["cell_model"] in scores and cell["cell_gold"] and cell["cell_predicted"]:
        st.markdown(f"**{md(cell['cell_model'])}: gold {md(cell['cell_gold'])}, predicted {md(cell['cell_predicted'])}**")
        pair_list.show(PAGE, "cell_pairs", state.ListRef.of("predictions", model=cell["cell_model"], split=split,
                                                             gold=cell["cell_gold"], predicted=cell["cell_predicted"],
                                                             via="cell"),
                       columns=["row", "id", "gold", "predicted", "confidence", "premise", "hypothesis"])
    else:
        st.caption(":material/touch_app: Click a cell of a confusion matrix to list its pairs.")


def say_ignored_cell(cell: dict[str, str], labels_of: dict[str, Sequence[str]]) -> bool:
    """True, after one line naming it, when a `cell_*` URL value names no shown model or no label of it (a
    hand-edited or stale link): the cell is then ignored, and the reader told so instead of seeing nothing happen."""
    model = cell["cell_model"]
    if model and model not in labels_of:
        st.info(f"The link's {code('cell_model=' + model)} names no model shown here; the confusion cell is ignored.")
        return True
    for name in ("cell_gold", "cell_predicted"):
        if model and cell[name] and cell[name] not in labels_of[model]:
            st.info(f"The link's {code(name + '=' + cell[name])} is not a label of {md(model)}; the confusion cell is "
                    "ignored.")
            return True
    return False


def error_list(split: str, models: Sequence[cache.Model]) -> None:
    """Every error of one model on the split — not a sample — filterable and sortable, paged."""
    st.subheader("Pairs a model gets wrong")
    names = [m.name for m in models]
    first, second, third, fourth = st.columns([2, 2, 2, 2])
    name = controls.select(PAGE, "wrong_model", "Model", names, where=first)
    labels = next(m.labels for m in models if m.name == name)
    cells = [ANY] + [f"{g} → {p}" for g in labels for p in labels if g != p]
    cell = controls.select(PAGE, "wrong_cell", "Gold → predicted", cells, ANY, where=second)
    total = cache.split_size(split)
    sources = [NO_TAGS] + ([GOLD] if cached_samples.gold_tags(split)[0] else []) + ([SAMPLE, EVERY] if total else [])
    source = controls.select(PAGE, "wrong_tags", "Tags (automatic ones parse every sentence)", sources, NO_TAGS,
                             where=third)
    default_sample = min(tag_breakdown.DEFAULT_SAMPLE, total or 0)
    sample = int(state.value(PAGE, "tag_size", default_sample)[0] or 0) or default_sample  # 0 there: gold tags only
    spec = {NO_TAGS: None, GOLD: lists.TAGS_GOLD, SAMPLE: f"automatic:{sample}", EVERY: lists.TAGS_ALL}[source]
    tag_names: list[str] = []
    if spec:
        tags, problem, _ = lists.tags_for(split, spec)
        if problem:
            st.error(md(problem))
        tag_names = sorted({t for names_ in (tags or {}).values() for t in names_})
    tag = controls.select(PAGE, "wrong_tag", "Tag", [ANY] + tag_names, ANY, where=fourth)
    low, high, unknown_column = st.columns([1, 1, 2])
    min_length = controls.number(PAGE, "wrong_min", "Min tokens (premise + hypothesis)", 0, 0, 10_000, where=low)
    max_length = controls.number(PAGE, "wrong_max", "Max tokens (0: no limit)", 0, 0, 10_000, where=high)
    unknown = controls.radio(PAGE, "wrong_unknown", "Unknown words (to this model)", UNKNOWN_FILTERS, "any",
                             where=unknown_column)
    gold, predicted = cell.split(" → ") if cell != ANY else (None, None)
    ref = state.ListRef.of("predictions", model=name, split=split, wrong="1", gold=gold, predicted=predicted,
                           tag=None if tag == ANY else tag, tags=spec, min_length=min_length or None,
                           max_length=max_length or None, unknown=None if unknown == "any" else unknown, via="errors")
    if tag != ANY and source == SAMPLE:
        st.caption(f"A tag filter keeps the errors among the {sample:,} sampled pairs that were tagged; choose "
                   f"\"{EVERY}\" to filter every error by tag.")
    pair_list.show(PAGE, "wrong_pairs", ref, columns=LIST_COLUMNS)
