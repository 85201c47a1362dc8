"""Error analysis: accuracy with 95% intervals and the majority baseline; per label and confusion matrices;
accuracy per annotation tag (gold tags where MultiNLI dev has them, automatic elsewhere) in DIIN's Table 7
layout with counts; every number leads to its pairs, and a pair opens in the Pair explorer."""
from __future__ import annotations

import streamlit as st

from nlivis.app import challenge, loading, notes, selection, tagging, widgets
from nlivis.analysis.breakdown import (TaggedSplit, accuracy_by_genre, accuracy_by_label, accuracy_by_tag_and_source,
                                       confusion_matrix, overall_accuracy, pairs_with_tag, per_label_scores,
                                       table7_long, table7_with_counts, with_status_marks)
from nlivis.analysis.ablations import with_sentences
from nlivis.store.predictions import predictions_frame
from nlivis.viz import accuracy_by_tag_bars, accuracy_interval_bars, comparison_bars, confusion_matrix_heatmap

ANY_TAG = "(any tagged pair)"

st.set_page_config(page_title="nlivis · error analysis", page_icon=":material/rule:", layout="wide")
selection.follow_url()
st.title("Error analysis")
widgets.image_format_choice()
models = widgets.require_models("error analysis")
notes.show_protocol_notes(models)

splits_by_model = {m.label: loading.prediction_splits(m) for m in models}
all_splits = sorted({key for splits in splits_by_model.values() for key in splits})
if not all_splits:
    st.info("The loaded checkpoints have no recorded prediction files (predictions_<split>.jsonl.gz, written when a "
            "checkpoint is trained). Evaluate them on any file in the challenge-set section below, or with "
            "`python -m nlivis evaluate CHECKPOINT --file PATH`.")
    challenge.render_challenge_breakdown(models)
    st.stop()

trained = loading.training_splits(models)
split = st.selectbox("Evaluation split", all_splits, key="errors_split", index=all_splits.index(loading.default_split(models, all_splits)),
                     format_func=lambda key: loading.split_label(key, trained))
challenge.show_split_truncation(models, split)
predictions: dict[str, list] = {}
for model in models:
    if split not in splits_by_model[model.label]:
        st.caption(f"{model.label}: no predictions for {split}.")
        continue
    loaded, error = loading.model_predictions(model, split)
    if error:
        st.error(error)
    else:
        predictions[model.label] = loaded
if not predictions:
    st.stop()
labels_of = {m.label: m.labels for m in models}

st.subheader("Accuracy")
overall_table = overall_accuracy(predictions)
widgets.show_figure(accuracy_interval_bars(overall_table, title=f"accuracy on {split} (95% intervals; dashed: majority label)"),
                    "errors_overall", f"accuracy_{split}")
st.dataframe(overall_table, hide_index=True, width="stretch",
             column_config=widgets.percent_columns(["accuracy", "ci_low", "ci_high", "majority_accuracy"]))

st.subheader("Per label and confusion matrices")
columns = st.columns(min(3, len(predictions)))
normalize = st.toggle("Show rows as fractions of each gold label", value=False, key="errors_normalize")
clicked_cell = None
for i, (label, preds) in enumerate(predictions.items()):
    with columns[i % len(columns)]:
        try:
            matrix = confusion_matrix(preds, labels_of[label])
        except ValueError as error:
            st.error(f"{label}: {error}")
            continue
        figure = confusion_matrix_heatmap(matrix.to_numpy(), list(matrix.index), title=label, normalize=normalize)
        cell = widgets.clicked_cell(widgets.show_figure(figure, f"confusion_{i}", f"confusion_{label}_{split}", clickable=True))
        clicked_cell = clicked_cell or (cell and (label, *cell))
        st.dataframe(per_label_scores(preds, labels_of[label]).round(3), hide_index=True, width="stretch")
        st.dataframe(accuracy_by_label(preds, labels_of[label]).round(3), hide_index=True, width="stretch")

local_pairs = loading.read_local_split(split)[0]
if clicked_cell:
    cell_model, cell_gold, cell_predicted = clicked_cell
    cell_frame = predictions_frame(predictions[cell_model])
    cell_frame = cell_frame[(cell_frame["gold"] == cell_gold) & (cell_frame["predicted"] == cell_predicted)]
    st.markdown(f"**{cell_model}: gold {cell_gold}, predicted {cell_predicted}** — {len(cell_frame)} pairs")
    cell_table = with_sentences(cell_frame[["id", "gold", "predicted", "confidence"]].round(3), local_pairs)
    widgets.pair_table(cell_table, "errors_cell_pairs", split)
else:
    st.caption(":material/touch_app: Click a cell of a confusion matrix to list its pairs.")

def show_tag_breakdown() -> None:
    """Accuracy by annotation tag, the Table 7 layout and the wrong pairs per tag; returns early (never
    st.stop, so sections added after it still run) when the split's pairs cannot be tagged."""
    st.subheader("Accuracy by annotation tag")
    size_total = loading.split_size(split)
    if size_total is None:
        st.info(f"The pairs of {split} are not in the data folder, so they cannot be tagged (tags need the sentences). "
                "Set a data folder on the Home page.")
        return
    gold, gold_file, gold_error = tagging.gold_tags(split)
    if gold_error:
        st.error(gold_error)
    split_ids = set(loading.split_rows(split))
    gold = {pair_id: names for pair_id, names in gold.items() if pair_id in split_ids}
    sample_size = size_total
    if size_total > 10:
        sample_size = st.slider("Pairs to tag automatically (random sample, fixed seed; tagging parses every sentence)",
                                min_value=10, max_value=size_total, value=min(500, size_total), step=10, key="errors_tag_size")
    tagged, error = loading.tagged_sample(split, sample_size)
    if error or tagged is None:
        st.error(error)
        return
    for tag, reason in tagged.unavailable.items():
        st.warning(f"{tag} (automatic): {reason}")
    automatic = {pair_id: names for pair_id, names in tagged.tags.items() if pair_id not in gold}
    if gold:
        st.caption(f"**Gold tags** (human annotation, RepEval 2017, `{gold_file}`) on {len(gold)} pairs of {split}; "
                   f"**automatic tags** (rules measured against the gold tags: `python -m nlivis tags-report`) on "
                   f"{len(automatic)} other sampled pairs. The two are scored apart: `source` says which; `status` "
                   "marks an automatic tag approximate where its rule's F1 against the gold tags is below 0.5 on a "
                   "half of the annotated pairs, unavailable where it cannot be decided here.")
    else:
        st.caption(f"Automatic tags (rules after Williams et al. as DIIN §4.6 lists them; their agreement with the "
                   f"MultiNLI gold tags: `python -m nlivis tags-report`) on {len(automatic)} of {size_total} pairs; "
                   f"{split} has no published gold tags. `status` marks a tag approximate where its rule's F1 "
                   "against the MultiNLI gold tags is below 0.5 on a half of the annotated pairs.")
    tag_table = accuracy_by_tag_and_source(predictions, gold, automatic, tagged.unavailable)
    tags_of = {"gold": gold, "automatic": automatic}
    sources = [source for source in ("gold", "automatic") if tags_of[source]]
    if not sources:
        st.info(f"No pair of {split} could be tagged.")
        return
    shown_source = st.radio("Tags drawn", sources, horizontal=True, key="errors_tag_source") if len(sources) > 1 else sources[0]
    drawn = tag_table[(tag_table["source"] == shown_source) & (tag_table["count"].fillna(0) > 0)]
    widgets.show_figure(accuracy_by_tag_bars(with_status_marks(drawn), group="model",
                                             title=f"accuracy by {shown_source} tag on {split} "
                                             "(95% intervals; black tick: majority label; ≈ approximate tag)"),
                        "errors_by_tag", f"tags_{shown_source}_{split}")
    st.caption(":material/touch_app: Click a line of the table to list the pairs behind its number.")
    tag_event = st.dataframe(tag_table, hide_index=True, width="stretch", key="errors_tag_table", on_select="rerun",
                             selection_mode="single-row",
                             column_config=widgets.percent_columns(["frequency", "accuracy", "ci_low", "ci_high", "majority_accuracy"]))
    picked = list(getattr(getattr(tag_event, "selection", None), "rows", []) or [])
    if picked:
        row = tag_table.iloc[picked[0]]
        behind = pairs_with_tag(predictions[row["model"]], tags_of[row["source"]], row["tag"])
        st.markdown(f"**{row['model']} · {row['tag']} ({row['source']} tags)** — {len(behind)} pairs, "
                    f"{int(behind['correct'].astype(bool).sum())} right")
        widgets.pair_table(with_sentences(behind[["id", "gold", "predicted", "correct", "confidence"]].round(3), local_pairs),
                           "errors_tag_pairs", split)

    other = tagging.matching_split(split)
    if other and all(other in splits_by_model[label] for label in predictions):
        other_gold = tagging.gold_tags(other)[0] if gold else {}
        if gold and other_gold:
            other_source, other_tags = "gold", other_gold
        else:
            other_tagged, _ = loading.tagged_sample(other, min(sample_size, loading.split_size(other) or sample_size))
            other_source, other_tags = "automatic", (other_tagged.tags if other_tagged is not None else {})
        if other_tags:
            other_predictions = {m.label: loading.model_predictions(m, other)[0] for m in models if m.label in predictions}
            halves = {tagging.split_half(split): TaggedSplit(predictions, gold if other_source == "gold" else automatic),
                      tagging.split_half(other): TaggedSplit(other_predictions, other_tags)}
            long = table7_long({half: halves[half] for half in ("matched", "mismatched")}, source=other_source,
                               unavailable=tagged.unavailable)
            st.markdown(f"**DIIN Table 7 layout** ({other_source} tags; matched and mismatched side by side: pairs, "
                        "majority-label baseline and each model's accuracy [95% interval], in %)")
            st.dataframe(table7_with_counts(long), width="stretch")
            st.caption("The pairs behind any cell:")
            half_column, tag_column, model_column, wrong_column = st.columns(4)
            cell_half = half_column.selectbox("Split", ["matched", "mismatched"], key="errors_t7_half")
            cell_tag = tag_column.selectbox("Tag", list(dict.fromkeys(long["tag"])), key="errors_t7_tag")
            cell_model = model_column.selectbox("Model", list(predictions), key="errors_t7_model")
            only_wrong = wrong_column.toggle("Only wrong pairs", value=False, key="errors_t7_wrong")
            half_split = split if tagging.split_half(split) == cell_half else other
            cell_pairs = pairs_with_tag(halves[cell_half].predictions[cell_model], halves[cell_half].tags, cell_tag, only_wrong)
            widgets.pair_table(with_sentences(cell_pairs[["id", "gold", "predicted", "correct", "confidence"]].round(3),
                                              loading.read_local_split(half_split)[0]), "errors_t7_pairs", half_split)

    genres = {pid: pair.genre for pid, pair in tagged.pairs.items()}
    if any(genres.values()):
        st.subheader("Accuracy by genre")
        genre_table = accuracy_by_genre(predictions, genres)
        widgets.show_figure(comparison_bars(genre_table, "genre", "accuracy", group="model", title=f"accuracy by genre on {split}"),
                            "errors_by_genre", f"genres_{split}")

    st.subheader("Pairs a model gets wrong")
    left, middle, right = st.columns(3)
    chosen_model = left.selectbox("Model", list(predictions), key="errors_model")
    chosen_source = middle.selectbox("Tags", sources, key="errors_wrong_source")
    chosen_tags = tags_of[chosen_source]
    tags_present = sorted({t for ts in chosen_tags.values() for t in ts})
    chosen_tag = right.selectbox("Tag", [ANY_TAG] + tags_present, key="errors_tag")
    frame = pairs_with_tag(predictions[chosen_model], chosen_tags, None if chosen_tag == ANY_TAG else chosen_tag, only_wrong=True)
    if frame.empty:
        st.info(f"{chosen_model} gets every {chosen_source}-tagged pair{'' if chosen_tag == ANY_TAG else ' with ' + chosen_tag} right.")
    else:
        wrong = with_sentences(frame[["id", "gold", "predicted", "confidence"]].round(3), local_pairs)
        wrong["tags"] = wrong["id"].map(lambda pid: ", ".join(sorted(chosen_tags.get(pid, ()))))
        st.caption(f"{len(wrong)} wrong pairs ({chosen_source} tags)")
        widgets.pair_table(wrong, "errors_wrong", split)


show_tag_breakdown()
tagging.render_taxinli_breakdown(models, split, predictions)
challenge.render_challenge_breakdown(models)
