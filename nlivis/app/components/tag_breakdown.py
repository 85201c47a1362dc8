"""Accuracy by annotation tag for the models shown on one split — gold tags where MultiNLI dev has them,
automatic tags elsewhere, never mixed in one number — with DIIN's Table 7 layout for a matched / mismatched
pair of splits, accuracy by genre, and the pairs behind every number (a list that opens in the Pair explorer)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import streamlit as st

from nlivis.analysis.breakdown import (accuracy_by_genre, accuracy_by_tag_and_source, table7_with_counts,
                                       taxonomy_long, with_status_marks)
from nlivis.data.split_choice import matching_split, split_half
from nlivis.data.taxonomies import join_to_pairs
from nlivis.analysis.paper_tables import DIIN_TABLE7_CITATION, with_diin_paper_column
from nlivis.analysis.tag_sources import SplitTags, split_tags, table7_halves
from nlivis.app import cache, state
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls, figures, line_grid, lists, pair_list, samples
from nlivis.app.components.frame import NOTE_ICON
from nlivis.app.text import code, md
from nlivis.viz.vega.bars import comparison_bars
from nlivis.viz.vega.errors import accuracy_by_tag_bars
from nlivis.workflows.samples import ALL_PAIRS, TaggedSample

PERCENT = ["frequency", "accuracy", "ci_low", "ci_high", "majority_accuracy"]
DEFAULT_SAMPLE = 500
"""Pairs tagged automatically unless the reader asks for more (tagging parses every sentence)."""
TAG_AT_ONCE = 50
"""Up to this many pairs are tagged as the tab opens; more wait for a button (500 pairs with WordNet and the
parser loading took minutes on a busy 2-core machine, and a split with gold tags needs none to show Table 7)."""


def percent_columns(columns: Sequence[str]) -> dict[str, Any]:
    """`st.dataframe(column_config=...)` showing the given 0–1 columns as percentages (one format on every page)."""
    return {column: st.column_config.NumberColumn(format="percent") for column in columns}


def tag_source_spec(source: str, size: int, total: int) -> str:
    """How a list names its tags: "gold", or "automatic:<pairs>" / "automatic:all"."""
    if source == "gold":
        return lists.TAGS_GOLD
    return lists.TAGS_ALL if size >= total else f"automatic:{size}"


def taggable_split_size(split: str) -> int | None:
    """The number of pairs in `split`, or None after telling the user why they cannot be tagged: tagging needs the
    sentences, and the split's pairs are not in the data folder."""
    total = cache.split_size(split)
    if total is None:
        st.info(f"The pairs of {md(split)} are not in the data folder, so they cannot be tagged (tags need the sentences). "
                "Set a data folder on the Home page.")
    return total


def section(page: str, split: str, models: Sequence[cache.Model], predictions: Mapping[str, list]) -> None:
    """The whole "accuracy by annotation tag" section: the chart and table by tag and source, the pairs behind a
    line, DIIN's Table 7 and accuracy by genre (or why the split's pairs cannot be tagged)."""
    st.subheader("Accuracy by annotation tag")
    total = taggable_split_size(split)
    if total is None:
        return
    gold, gold_file, gold_error = cached_samples.gold_tags(split)
    if gold_error:
        st.error(md(gold_error))
    has_gold = any(pair_id in gold for pair_id in cache.split_rows(split))
    size = sample_size(page, split, total, has_gold)
    tagged = automatic_tags(page, split, size, total, has_gold)
    if tagged is None:
        return
    for tag, reason in tagged.unavailable.items():
        st.warning(f"{md(tag)} (automatic): {md(reason)}")
    tags = split_tags(list(cache.split_rows(split)), gold, tagged.tags)
    tags_caption(split, tags, gold_file, total)
    if not tags.sources:
        st.info(f"No pair of {md(split)} could be tagged.")
        return
    by_tag(page, split, models, predictions, tags, tagged.unavailable, size, total)
    table7(page, split, models, predictions, tags, size, tagged.unavailable)
    genres(split, models, predictions)
    taxinli(split, models, predictions)


def sample_size(page: str, split: str, total: int, has_gold: bool) -> int:
    """How many pairs to tag automatically: a slider for a split of more than 10 pairs, else all of them."""
    if total <= 10:
        return total
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    label = ("Pairs without gold tags to tag automatically as well (0: gold tags only; random sample, fixed seed; "
             "tagging parses every sentence)" if has_gold else
             "Pairs to tag automatically (random sample, fixed seed; tagging parses every sentence; kept on disk)")
    size = controls.number(page, "tag_size", label, 0 if has_gold else min(DEFAULT_SAMPLE, total),
                           0 if has_gold else 10, total, where=left, slider=True, step=10)
    right.caption(f"{total:,} pairs in {md(split)}")
    return size


def automatic_tags(page: str, split: str, size: int, total: int, has_gold: bool) -> TaggedSample | None:
    """The automatic tags of `size` pairs (at once for a few, after a button for more; none for 0), or None
    when there is nothing to break down (an error, or no tags yet and no gold tags)."""
    if size and (size <= TAG_AT_ONCE or samples.computed(
            page, f"Tag {size:,} pairs", f"parses {size:,} pairs of {split} with spaCy's dependency parser and applies the "
            "tag rules (WordNet and the parser load once; minutes on a busy machine); kept on disk, so once only",
            f"{split}:{size}", name="tagged")):
        found, error = cached_samples.tagged_sample(split, ALL_PAIRS if size >= total else size)
        if error or found is None:
            st.error(md(error))
            return None
        return found
    if size:
        st.caption(f"{NOTE_ICON} Automatic tags are computed when you ask (the button above): "
                   + ("the gold tags below need none." if has_gold else "until then there is nothing to break down."))
        if not has_gold:
            return None
    return TaggedSample({}, {}, 0)


def tags_caption(split: str, tags: SplitTags, gold_file: str | None, total: int) -> None:
    """Where the tags come from: gold (and automatic on other pairs), or automatic only."""
    if tags.gold:
        st.caption(f"**Gold tags** (human annotation, RepEval 2017, {code(gold_file)}) on {len(tags.gold):,} pairs of "
                   f"{md(split)}; **automatic tags** (rules measured against the gold tags: `python -m nlivis tags-report`) "
                   + (f"on {len(tags.automatic):,} other sampled pairs" if tags.automatic else
                      "on none of the other pairs (the slider above adds them)")
                   + ". The two are scored apart: `source` says which; `status` marks "
                   "an automatic tag approximate where its rule's F1 against the gold tags is below 0.5 on a half of the "
                   "annotated pairs, unavailable where it cannot be decided here.")
    else:
        st.caption(f"Automatic tags (rules after Williams et al. as DIIN §4.6 lists them; their agreement with the MultiNLI "
                   f"gold tags: `python -m nlivis tags-report`) on {len(tags.automatic):,} of {total:,} pairs; "
                   f"{md(split)} has no published gold tags. `status` marks a tag approximate where its rule's F1 against "
                   "the MultiNLI gold tags is below 0.5 on a half of the annotated pairs.")


def by_tag(page: str, split: str, models: Sequence[cache.Model], predictions: Mapping[str, list], tags: SplitTags,
           unavailable: Mapping[str, str], size: int, total: int) -> None:
    """Accuracy by tag and source: a chart of one source's tags, the table, and the pairs behind a clicked line."""
    table = accuracy_by_tag_and_source(predictions, tags.gold, tags.automatic, unavailable)
    shown_source = tags.sources[0]
    if len(tags.sources) > 1:
        shown_source = controls.radio(page, "tag_source", "Tags drawn", tags.sources, tags.sources[0])
    drawn = table[(table["source"] == shown_source) & (table["count"].fillna(0) > 0)]
    colours = {m.name: m.colour for m in models}
    figures.show(accuracy_by_tag_bars(with_status_marks(drawn), group="model", colours=colours,
                                      title=f"accuracy by {shown_source} tag on {split} (95% intervals; grey tick: "
                                            "majority label; ≈ approximate tag)"), "errors_by_tag", f"tags_{shown_source}_{split}")
    st.caption(":material/touch_app: Click anywhere on a line of the table to list the pairs behind its number.")
    if "count" in table:  # a tag no pair has: 0 pairs, not "None"
        table = table.assign(count=table["count"].fillna(0).astype(int))
    event = st.dataframe(table, hide_index=True, width="stretch", key="errors_tag_table", on_select="rerun",
                         selection_mode=line_grid.LINE_CLICKS, column_config=percent_columns(PERCENT))
    picked, selection = line_grid.clicked_line(event)
    if state.new_event("errors_tag_table", selection) and picked is not None:
        row = table.iloc[picked]
        state.remember(page, "tag_model", row["model"], "")
        state.remember(page, "tag", row["tag"], "")
        state.remember(page, "tag_of", row["source"], "")
    chosen = {name: controls.kept(page, name, "") for name in ("tag_model", "tag", "tag_of")}
    if chosen["tag"] and chosen["tag_model"] in predictions:
        source = chosen["tag_of"] if chosen["tag_of"] in ("gold", "automatic") else shown_source
        spec = tag_source_spec(source, size, total)
        st.markdown(f"**{md(chosen['tag_model'])} · {md(chosen['tag'])} ({md(source)} tags)**")
        pair_list.show(page, "tag_pairs", state.ListRef.of("predictions", model=chosen["tag_model"], split=split,
                                                            tag=chosen["tag"], tags=spec, via="tag"),
                       columns=["row", "id", "gold", "predicted", "correct", "confidence", "premise", "hypothesis"])


def table7(page: str, split: str, models: Sequence[cache.Model], predictions: Mapping[str, list], tags: SplitTags,
           size: int, unavailable: Mapping[str, str]) -> None:
    """DIIN's Table 7 when `split` has a matched / mismatched other half that every model was evaluated on."""
    names = {m.name: m for m in models if m.name in predictions}

    def other_predictions(key: str):
        found = {}
        for name, model in names.items():
            loaded, error = cache.checkpoint_predictions(model.path, key)
            if error:
                return None
            found[name] = loaded
        return found

    def other_tags(key: str, source: str):
        other_total = cache.split_size(key) or size
        spec = lists.TAGS_GOLD if source == "gold" else tag_source_spec("automatic", min(size, other_total), other_total)
        return lists.tags_for(key, spec)[0] or {}

    built = table7_halves(split, predictions, tags, other_predictions, other_tags, unavailable)
    if built is None:
        return
    st.markdown(f"**DIIN Table 7 layout** ({built.source} tags; matched and mismatched side by side: pairs, majority-"
                "label baseline and each model's accuracy [95% interval], in %, then the DIIN paper's own number)")
    st.dataframe(without_missing(with_diin_paper_column(built.table())), width="stretch")
    st.caption(f"{NOTE_ICON} *DIIN (paper)*: DIIN's accuracy per tag as its paper prints it ({md(DIIN_TABLE7_CITATION)}):"
               " its model trained on the full MultiNLI training data, scored on the hand-annotated dev pairs (about "
               "1,000), so a level to look up to, not a run of ours. *pairs* 0: no pair of that half has the tag; –: no "
               "number (no pairs to score, or a tag the paper's table lacks).")
    st.caption("The pairs behind any cell:")
    half_column, tag_column, model_column, wrong_column = st.columns(4, vertical_alignment="bottom")
    half = controls.select(page, "t7_half", "Split", ["matched", "mismatched"], split_half(split), where=half_column)
    tag = controls.select(page, "t7_tag", "Tag", list(dict.fromkeys(built.long["tag"])), where=tag_column)
    model = controls.select(page, "t7_model", "Model", list(names), where=model_column)
    only_wrong = controls.toggle(page, "t7_wrong", "Only wrong pairs", False, where=wrong_column)
    half_split = built.splits[half]
    half_total = cache.split_size(half_split) or size
    spec = lists.TAGS_GOLD if built.source == "gold" else tag_source_spec("automatic", min(size, half_total), half_total)
    pair_list.show(page, "t7_pairs", state.ListRef.of("predictions", model=model, split=half_split, tag=tag, tags=spec,
                                                       wrong="1" if only_wrong else None, via="table7"),
                   columns=["row", "id", "gold", "predicted", "correct", "confidence", "premise", "hypothesis"])


def without_missing(table):
    """A Table 7 layout for display: a pair count that is missing is 0 (no pair has the tag), any other missing
    cell "–" (st.dataframe would print None)."""
    shown = table.copy()
    for column in shown.columns:
        if str(column).endswith(" pairs"):
            shown[column] = shown[column].fillna(0).astype(int)
        elif shown[column].isna().any():
            shown[column] = shown[column].astype(object).where(shown[column].notna(), "–")
    return shown


def genres(split: str, models: Sequence[cache.Model], predictions: Mapping[str, list]) -> None:
    pairs, _ = cache.split_pairs(split)
    by_id = {pair.id: pair.genre for pair in pairs}
    if not any(by_id.values()):
        return
    st.subheader("Accuracy by genre")
    table = accuracy_by_genre(predictions, by_id)
    figures.show(comparison_bars(table, "genre", "accuracy", title=f"accuracy by genre on {split}", group="model",
                                 colours={m.name: m.colour for m in models}), "errors_by_genre", f"genres_{split}")
    st.caption(f"{NOTE_ICON} every pair of {md(split)} that has a genre.")


def taxinli(split: str, models: Sequence[cache.Model], predictions: Mapping[str, list]) -> None:
    """Accuracy per TaxiNLI category (and genre) for the models shown on a MultiNLI dev split and, on the same
    pairs, the release's full-data reference models; matched and mismatched side by side where both halves have
    predictions. Nothing when the file or the split's pairs are absent."""
    taxonomy, error = cached_samples.taxinli()
    if error:
        st.error(md(error))
    if taxonomy is None:
        return
    halves: dict[str, tuple[Mapping[str, list], dict]] = {}
    for key in (split, matching_split(split)):
        if key is None:
            continue
        pairs, _ = cache.split_pairs(key)
        rows = join_to_pairs(taxonomy.rows, pairs) if pairs else {}
        found: dict[str, list] | None = dict(predictions) if key == split else {}
        if key != split:
            for model in models:
                if model.name in predictions:
                    loaded, problem = cache.checkpoint_predictions(model.path, key)
                    if problem:
                        found = None
                        break
                    found[model.name] = loaded
        if rows and found:
            halves[split_half(key)] = (found, rows)
    if split_half(split) not in halves:
        return
    st.subheader("Accuracy by TaxiNLI category")
    st.caption(f"TaxiNLI (Joshi et al., 2020; {code(str(taxonomy.path))}): 15 reasoning categories annotated by hand on "
               "MultiNLI dev pairs; beside ours, three models the release scored, trained on the **full** MultiNLI "
               "training set, on the same pairs (ours follow the reduced protocol). Accuracy in % [95% interval]; a "
               "pair with several categories counts in each." + "".join(f" {md(note)}." for note in taxonomy.notes))
    ordered = {half: halves[half] for half in ("matched", "mismatched") if half in halves}
    long = cache.memo("taxinli", (split, tuple(sorted(predictions))), lambda: taxonomy_long(ordered))
    current = long[long["split"] == split_half(split)]
    figures.show(accuracy_by_tag_bars(current, group="model", title=f"accuracy by TaxiNLI category on {split} "
                                      "(95% intervals; grey tick: majority label)"), "errors_taxinli", f"taxinli_{split}")
    st.dataframe(without_missing(table7_with_counts(long)), width="stretch")
    st.markdown("**By genre** (TaxiNLI's genre column: MultiNLI dev matched and mismatched have different genres)")
    st.dataframe(without_missing(table7_with_counts(taxonomy_long(ordered, by="genre"))), width="stretch")
    st.caption(f"{NOTE_ICON} *pairs* 0: no pair of that half is in the category; –: no number (no pairs to score).")
