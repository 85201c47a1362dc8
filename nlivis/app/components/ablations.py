"""Ablations: the checkpoints of one model family under one protocol side by side — the full model, its
ablations and other seeds — against a reference, with seed noise, per-tag differences, the pairs where they
disagree, and the paper's ablation rows. Read from what the folders recorded: no weights are loaded."""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.ablations import (OURS, comparable_splits, compare_variants, families, family_members,
                                       full_model_seeds, our_accuracies, paper_ablations, short_names, tag_deltas,
                                       variant_table)
from nlivis.analysis.tags import approximate_tags
from nlivis.analysis.families import family_predictions, measure_seed_noise
from nlivis.analysis.paper_tables import SOURCE_NOTE, paper_dataset
from nlivis.app import cache, state
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls, figures, pair_list
from nlivis.app.components.frame import NOTE_ICON, protocol_note_for
from nlivis.app.components.home import training_splits
from nlivis.app.components.tag_breakdown import DEFAULT_SAMPLE, percent_columns, taggable_split_size
from nlivis.app.text import code, markdown_table, md, percent_formats
from nlivis.viz.vega.bars import comparison_bars, delta_bars, difference_intervals
from nlivis.workflows.samples import ALL_PAIRS

PAGE = "ablations"
TABS = ("Paired comparison", "By annotation tag", "Pairs where they disagree", "What the paper reports")
"""The page's sections below the variants: only the open one is computed and drawn (`controls.tabs`), as on Error
analysis. Drawn one under another, the four cost every visit by URL their five tables, three charts and the
tagging sample's input: +1.0 s over Streamlit's floor (bench/RESULTS.md, session 31)."""
ACCURACY_COLUMNS = ("accuracy", "reference accuracy", "difference", "CI low", "CI high", "delta")


WIDEST_TABLE = 8
"""Columns a table may have before it is split in two (`split_wide`). In a 1,280-px window, one table each, the
variants under mnli-small (five accuracy columns: thirteen in all) ran ~330 px past the page's edge, the paired
comparison (fourteen) ~170 px, and AttentiveConvNet's variants under snli-small (nine, with long names and paper
rows) 3 px."""

P_VALUES = {"McNemar p": "McNemar's exact p (two-sided), unadjusted", "Holm p": "Holm-adjusted over the table's tests",
            "BH q": "Benjamini–Hochberg q over the table's tests"}
"""The p-value columns and what each is; shown in scientific notation: 1.5e-18, not 0.0000000000000000015."""


def show_table(table: pd.DataFrame, formats: dict[str, str]) -> None:
    """A small table (a line per checkpoint) as Markdown, not a data grid: a grid's code costs a new tab its
    download before the page's charts draw (`text.markdown_table`); every column is shown, none scrolled away."""
    st.markdown(markdown_table(list(table.columns), table.itertuples(index=False), formats))


def split_wide(table: pd.DataFrame, first: Sequence[str]) -> list[pd.DataFrame]:
    """`table` as one table, or, wider than `WIDEST_TABLE` columns, as two that share its first column (the
    checkpoint or variant): the columns in `first`, then the rest. A Markdown table cannot scroll sideways
    without markup of the page's own, which no page renders from Markdown."""
    if len(table.columns) <= WIDEST_TABLE:
        return [table]
    key = table.columns[0]
    head = [key, *[c for c in table.columns if c in first and c != key]]
    return [table[head], table[[key, *[c for c in table.columns if c not in head]]]]


def show_tables(table: pd.DataFrame, first: Sequence[str], formats: dict[str, str]) -> None:
    """`show_table` for each part of `split_wide(table, first)`."""
    for part in split_wide(table, first):
        show_table(part, formats)


def page() -> None:
    records, problems = cache.variant_records()
    for problem in problems:
        st.warning(md(problem))
    if not records:
        st.info("No checkpoints found. Train a model and its ablations on the **Train** page (e.g. configs `gcnn` and "
                "`gcnn-no_forget_gate` on the same dataset), or point Home at a folder holding checkpoints.")
        state.stop()
    by_family = families(records)
    linked = next((r for r in records if r.name == state.value(PAGE, "variant", "")[0]), None)  # the URL's variant
    left, right = st.columns(2)
    model = controls.select(PAGE, "family", "Model family", list(by_family), linked.model if linked else None, where=left)
    protocol = controls.select(PAGE, "protocol", "Protocol (variants are compared within one)", by_family[model],
                               linked.protocol if linked and linked.model == model else None, where=right)
    members = family_members(records, model, protocol)
    seeds = full_model_seeds(members)
    st.caption(f"{NOTE_ICON} {protocol_note_for(protocol)}")
    names = [m.name for m in members]
    reference_name = controls.select(PAGE, "variant", "Reference (differences are variant − reference)", names,
                                     seeds[0].name if seeds else names[0],
                                     help="the full model (its first seed) when one was trained")
    reference = members[names.index(reference_name)]
    if not seeds:
        st.warning(f"No checkpoint of the full {code(model)} config under {md(protocol)}: differences are against "
                   f"{md(reference_name)}.")
    variants_table(model, protocol, members, reference)
    tab, containers = controls.tabs(PAGE, "tab", TABS)  # only the open tab is computed and drawn
    with containers[TABS.index(tab)]:
        if tab == TABS[3]:
            paper(model, protocol, members)
        else:
            paired(model, protocol, members, reference, seeds, tab)


def variants_table(model: str, protocol: str, members, reference) -> None:
    st.subheader("Variants")
    table = variant_table(members, reference)
    # the chart's labels are the variants, each inside its checkpoint's name; one device for all is said once
    shown = table.drop(columns=["variant"])
    devices = shown["device"].dropna().unique()
    if len(devices) == 1:
        shown = shown.drop(columns=["device"])
    formats = {**percent_formats(table.attrs["accuracy_columns"]), "seed": ".0f", "parameters": ",.0f",
               "training time (min)": ".1f", "training pairs/s": ",.0f"}
    show_tables(shown, ["seed", *table.attrs["accuracy_columns"]], formats)  # what each scored, how each was trained
    if len(devices) == 1:
        st.caption(f"Every checkpoint here was trained on {md(devices[0])}.")
    select_column = table.attrs["select_column"]
    chart = table.dropna(subset=[select_column])
    figures.show(comparison_bars(chart, "variant", select_column, title=f"{model} · {protocol} · accuracy on {select_column}"),
                 "ablations_accuracy", f"{model}_{protocol}_ablations_accuracy")
    if len(members) < 2:
        st.info(f"Only one checkpoint of {md(model)} under {md(protocol)}. Train a variant on the **Train** page (a config "
                f"named {code(f'{model}-…')}) or a second seed to compare.")


def paired(model: str, protocol: str, members, reference, seeds, tab: str) -> None:
    """The variants' predictions against the reference's on one split, pair by pair: the differences with their
    significance (tab `TABS[0]`), per annotation tag (`TABS[1]`), or the pairs where they disagree (`TABS[2]`)."""
    shared = comparable_splits(members, reference)
    if len(members) < 2:
        st.caption("Needs at least two checkpoints.")
        return
    if not shared:
        st.info(f"{md(reference.name)} shares no prediction file (predictions_<split>.jsonl) with the other variants.")
        return
    split = controls.select(PAGE, "split", "Evaluation split", shared)
    key = (tuple((m.name, cache.predictions_stamp(m.folder, split)) for m in members), reference.name, split)
    reference_predictions, variants, problems = cache.memo(
        "family predictions", key, lambda: family_predictions(members, reference, split, cache.checkpoint_predictions))
    for problem in problems:
        st.error(md(problem))
    if not (variants and reference_predictions):
        st.info(f"No predictions on {md(split)} to compare.")
        return
    compared = Compared(split, key, reference_predictions, variants)
    if tab == TABS[1]:
        by_tag(model, protocol, members, reference, compared)
    elif tab == TABS[2]:
        disagreements(members, reference, compared)
    else:
        differences(model, protocol, members, reference, seeds, compared)


class Compared(NamedTuple):
    """One split's predictions of the reference and of the variants that share it, and the memo key they are
    kept under (`paired`)."""
    split: str
    key: tuple
    reference_predictions: Any
    variants: dict


def differences(model: str, protocol: str, members, reference, seeds, compared: Compared) -> None:
    """Each variant − the reference on the pairs both predicted: the seed noise, the intervals' chart, the table."""
    split, key, reference_predictions, variants = compared
    noise, noise_problem = cache.memo("seed noise", key, lambda: measure_seed_noise(seeds, split, cache.checkpoint_predictions))
    labels = short_names(members)
    if noise is not None:
        st.caption(f"Seed noise: {md(noise.describe(split))}. A variant whose difference is no larger than the range "
                   "is *within seed noise*: the ablation did not change accuracy by more than re-training does"
                   + (" (two seeds give a rough estimate: train a third with "
                      f"{code(f'scripts/train_shipped.py --only {model}-{protocol}-seed3')})." if len(noise.seeds) < 3 else "."))
    elif len(seeds) < 2:
        st.caption(f"Only one seed of the full {code(model)} config under {md(protocol)}: whether a difference is within "
                   f"seed noise cannot be said. Train {code(model)} with seed 2 (folder suffix `-seed2`) to know.")
    else:
        st.warning(f"Seed noise cannot be measured: {md(noise_problem)}.")
    comparison = cache.memo("variant comparison", key, lambda: compare_variants(reference_predictions, variants, noise))
    figures.show(difference_intervals(comparison.assign(label=comparison["variant"].map(labels)), label="label",
                                      noise=noise.gap if noise else None,
                                      title=f"{model} · {protocol} · accuracy difference vs {labels[reference.name]} on {split}"),
                 "ablations_differences", f"{model}_{protocol}_differences_{split}")
    show_tables(comparison, ["pairs", *ACCURACY_COLUMNS],  # the difference, then its significance
                {**percent_formats([c for c in ACCURACY_COLUMNS if c in comparison]), **dict.fromkeys(P_VALUES, ".1e")})
    st.caption("Difference: variant − reference on the pairs both predicted, 95% paired-bootstrap interval; McNemar's "
               "exact test on the pairs only one of them gets right, Holm-adjusted over the variants of this table "
               "(significant: Holm p < 0.05; Benjamini–Hochberg q beside it)"
               + ("; within seed noise: the difference is no larger than the gap between two seeds of the full model, so "
                  "even a significant one may be what re-training alone gives." if noise is not None else "."))


def disagreements(members, reference, compared: Compared) -> None:
    """The pairs of the split on which the reference and the variants disagree, each opening with all of them."""
    names = [reference.name] + [m.name for m in members if m.name in compared.variants]
    ref = state.ListRef.of("disagreements", split=compared.split, members=",".join(names), via="disagreements")
    pair_list.show(PAGE, "disagreements", ref, sortable=False, open_models=names, page_size=100)
    st.caption("Most distinct labels first, then the widest spread of the probability the checkpoints give the gold label.")


def by_tag(model: str, protocol: str, members, reference, compared: Compared) -> None:
    """Accuracy per annotation tag, each variant − the reference, on a tagged sample of the split."""
    split, key, reference_predictions, variants = compared
    labels = short_names(members)
    total = taggable_split_size(split)
    if total is None:
        return
    size = total
    if total > 10:
        size = controls.number(PAGE, "tag_size", "Pairs to tag (random sample, fixed seed; tagging parses every sentence)",
                               min(DEFAULT_SAMPLE, total), 10, total, slider=True, step=10)
    tagged, tag_error = cached_samples.tagged_sample(split, ALL_PAIRS if size >= total else size)
    if tag_error or tagged is None:
        st.error(md(tag_error))
        return
    for tag, reason in tagged.unavailable.items():
        st.caption(f"{md(tag)}: {md(reason)}")
    deltas = cache.memo("tag deltas", key + (tagged.size,),
                        lambda: tag_deltas(reference_predictions, variants, tagged.tags, tagged.unavailable,
                                           approximate=approximate_tags()))
    if deltas.empty:
        st.info(f"No tagged pair of the {len(tagged.tags)} sampled is predicted by both the reference and a variant.")
        return
    figures.show(delta_bars(deltas.assign(variant=deltas["variant"].map(labels)),
                            title=f"{model} · {protocol} · accuracy change per tag vs {labels[reference.name]} on {split}"),
                 "ablations_tags", f"{model}_{protocol}_tag_differences_{split}")
    st.dataframe(deltas, hide_index=True, width="stretch",  # a line per tag and variant: long, sorted by the reader
                 column_config={**percent_columns([c for c in ACCURACY_COLUMNS if c in deltas]),
                                **{c: st.column_config.NumberColumn(format="%.1e", help=h) for c, h in P_VALUES.items()}})
    st.caption(f"McNemar's exact p per tag, Holm-adjusted over all {len(deltas)} tag × variant tests of this table "
               "(significant: Holm p < 0.05); BH q: Benjamini–Hochberg. `tag status` marks the automatic tags whose rule "
               "agrees poorly with the annotators (F1 below 0.5 on a half of the annotated MultiNLI dev pairs: "
               "`python -m nlivis tags-report`) as approximate.")


def paper(model: str, protocol: str, members) -> None:
    """The paper's ablation rows of the family, ours beside them where the paper reports our protocol's dataset: on
    the same split, or the nearest held-out one we have (`analysis.ablations.paper_ablations`)."""
    dataset = paper_dataset(protocol)
    ours = our_accuracies(members)  # the paper's rows are fixed: the table changes with ours alone (~0.1 s a run)
    trained = training_splits(protocol)
    key = (model, dataset, trained, tuple(sorted((config, tuple(sorted(scored.items()))) for config, scored in ours.items())))
    reported = cache.memo("paper ablations", key, lambda: paper_ablations(model, ours, trained, dataset=dataset)) \
        if dataset else None
    formats = {OURS: ".1f", "reported accuracy (%)": ".1f", "reported time per epoch (s)": ",g",
               "reported parameters": ",.0f"}
    if reported is not None and not reported.empty:
        st.caption(f"{md(reported.attrs['paper'])}, its {md(dataset)} rows: {SOURCE_NOTE}. The papers trained on the full "
                   f"datasets; ours come from the reduced protocol {md(protocol)}, so compare the differences between rows, "
                   "not the levels. Ours are on the paper's split where we have it and did not train on it, else on the "
                   "nearest held-out split of the same dataset, marked *stand-in* (MultiNLI's test labels are not "
                   "public: its dev set of the same genres stands in).")
        show_table(reported, formats)
        return
    elsewhere = cache.memo("paper ablations", (model,), lambda: paper_ablations(model))
    if elsewhere.empty:
        st.info(f"No paper table lists variants of {md(model)}.")
        return
    st.info(f"{md(elsewhere.attrs['paper'])} reports no {md(dataset or protocol)} rows for {md(model)}, so ours "
            f"({md(protocol)}) are not set beside any: a number on another dataset is no comparison. Its rows on other "
            "datasets:")
    show_table(elsewhere, formats)
