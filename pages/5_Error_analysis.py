"""Error analysis: accuracy per annotation tag (DIIN Table 7 layout), per label and genre, confusion matrices,
and the pairs a model gets wrong for a chosen tag."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from nlivis.app import loading, notes, selection, widgets
from nlivis.analysis.breakdown import (TaggedSplit, accuracy_by_genre, accuracy_by_label, accuracy_by_tag,
                                       confusion_matrix, per_label_scores, table7)
from nlivis.analysis.ablations import with_sentences
from nlivis.analysis.predictions import predictions_frame
from nlivis.viz import accuracy_by_tag_bars, comparison_bars, confusion_matrix_heatmap

# The MultiNLI dev hard subsets: matched and mismatched side by side give DIIN's Table 7 layout.
HARD_SPLITS = ("mnli_hard_matched_test", "mnli_hard_mismatched_test")

st.set_page_config(page_title="nlivis · error analysis", page_icon="🔎", layout="wide")
selection.follow_url()
st.title("Error analysis")
widgets.image_format_choice()
models = widgets.require_models("error analysis")
notes.show_protocol_notes(models)

splits_by_model = {m.label: loading.prediction_splits(m) for m in models}
all_splits = sorted({key for splits in splits_by_model.values() for key in splits})
if not all_splits:
    st.info("The loaded checkpoints have no prediction files (predictions_<split>.jsonl); evaluate them with "
            "`python -m nlivis evaluate CHECKPOINT --dataset … --split … --data-dir …` to create them.")
    st.stop()

trained = loading.training_splits(models)
split = st.selectbox("Evaluation split", all_splits, key="errors_split", index=all_splits.index(loading.default_split(models, all_splits)),
                     format_func=lambda key: loading.split_label(key, trained))
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
overall = []
for label, preds in predictions.items():
    frame = predictions_frame(preds)
    labelled = frame[frame["gold"].notna()]
    overall.append({"model": label, "accuracy": float(labelled["correct"].astype(bool).mean()) if len(labelled) else float("nan"),
                    "pairs": len(labelled)})
overall_table = pd.DataFrame(overall)
widgets.show_figure(comparison_bars(overall_table, "model", "accuracy", title=f"accuracy on {split}"), "errors_overall", f"accuracy_{split}")

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

if clicked_cell:
    cell_model, cell_gold, cell_predicted = clicked_cell
    cell_frame = predictions_frame(predictions[cell_model])
    cell_frame = cell_frame[(cell_frame["gold"] == cell_gold) & (cell_frame["predicted"] == cell_predicted)]
    st.markdown(f"**{cell_model}: gold {cell_gold}, predicted {cell_predicted}** — {len(cell_frame)} pairs")
    cell_table = with_sentences(cell_frame[["id", "gold", "predicted", "confidence"]].round(3), loading.read_local_split(split)[0])
    widgets.pair_table(cell_table, "errors_cell_pairs", split)
else:
    st.caption(":material/touch_app: Click a cell of a confusion matrix to list its pairs.")

st.subheader("Accuracy by annotation tag")
size_total = loading.split_size(split)
if size_total is None:
    st.info(f"The pairs of {split} are not in the data folder, so they cannot be tagged (tags need the sentences). "
            "Set a data folder on the Home page.")
    st.stop()
sample_size = size_total
if size_total > 10:
    sample_size = st.slider("Pairs to tag (random sample, fixed seed; tagging parses every sentence)", min_value=10,
                            max_value=size_total, value=min(500, size_total), step=10, key="errors_tag_size")
tagged, error = loading.tagged_sample(split, sample_size)
if error or tagged is None:
    st.error(error)
    st.stop()
for tag, reason in tagged.unavailable.items():
    st.warning(f"{tag}: {reason}")
st.caption(f"Automatic tags (rules after Williams et al. as DIIN §4.6 lists them) on {len(tagged.tags)} of {size_total} pairs.")

by_tag = []
for label, preds in predictions.items():
    table = accuracy_by_tag(preds, tagged.tags, unavailable=tagged.unavailable)
    table.insert(0, "model", label)
    by_tag.append(table)
tag_table = pd.concat(by_tag, ignore_index=True)
drawn = tag_table[tag_table["count"].fillna(0) > 0]
widgets.show_figure(accuracy_by_tag_bars(drawn, group="model", title=f"accuracy by tag on {split}"), "errors_by_tag", f"tags_{split}")
st.dataframe(tag_table.round(3), hide_index=True, width="stretch")

other = next((s for s in HARD_SPLITS if s != split), None) if split in HARD_SPLITS else None
if other and all(other in splits_by_model[label] for label in predictions):
    other_tagged, other_error = loading.tagged_sample(other, min(sample_size, loading.split_size(other) or sample_size))
    if other_tagged is not None:
        other_predictions = {label: loading.model_predictions(m, other)[0] for m in models
                             for label in [m.label] if label in predictions}
        splits = {split: TaggedSplit(predictions, tagged.tags), other: TaggedSplit(other_predictions, other_tagged.tags)}
        table = table7(splits[HARD_SPLITS[0]], splits[HARD_SPLITS[1]], unavailable=tagged.unavailable)
        st.markdown("**DIIN Table 7 layout** (matched / mismatched hard subsets; frequency = share of tagged pairs)")
        st.dataframe(table.round(3), width="stretch")

genres = {pid: pair.genre for pid, pair in tagged.pairs.items()}
if any(genres.values()):
    st.subheader("Accuracy by genre")
    genre_tables = []
    for label, preds in predictions.items():
        table = accuracy_by_genre(preds, genres)
        table.insert(0, "model", label)
        genre_tables.append(table)
    genre_table = pd.concat(genre_tables, ignore_index=True)
    widgets.show_figure(comparison_bars(genre_table, "genre", "accuracy", group="model", title=f"accuracy by genre on {split}"),
                          "errors_by_genre", f"genres_{split}")

st.subheader("Pairs a model gets wrong")
left, right = st.columns(2)
chosen_model = left.selectbox("Model", list(predictions), key="errors_model")
tags_present = sorted({t for ts in tagged.tags.values() for t in ts})
chosen_tag = right.selectbox("Tag", ["(any tagged pair)"] + tags_present, key="errors_tag")
frame = predictions_frame(predictions[chosen_model])
frame = frame[frame["id"].isin(tagged.tags.keys()) & (frame["correct"] == False)]  # noqa: E712 (None = no gold)
if chosen_tag != "(any tagged pair)":
    frame = frame[frame["id"].map(lambda pid: chosen_tag in tagged.tags.get(pid, ()))]
if frame.empty:
    st.info(f"{chosen_model} gets every tagged pair{'' if chosen_tag.startswith('(') else ' with ' + chosen_tag} right in this sample.")
else:
    wrong = pd.DataFrame({
        "id": frame["id"],
        "premise": frame["id"].map(lambda pid: tagged.pairs[pid].premise if pid in tagged.pairs else ""),
        "hypothesis": frame["id"].map(lambda pid: tagged.pairs[pid].hypothesis if pid in tagged.pairs else ""),
        "gold": frame["gold"], "predicted": frame["predicted"], "confidence": frame["confidence"].round(3),
        "tags": frame["id"].map(lambda pid: ", ".join(sorted(tagged.tags.get(pid, ())))),
    })
    st.caption(f"{len(wrong)} wrong pairs")
    widgets.pair_table(wrong, "errors_wrong", split)
