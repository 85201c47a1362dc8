"""Projection: the pooled pair representations of one model, in 2-D (UMAP or PCA), coloured by what you ask."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from nlivis.app import challenge, loading, notes, paths, selection, widgets
from nlivis.analysis.projection import (METHODS, ProjectionError, informative_tag, is_cached, pooled_outputs, projected_pairs,
                                        tag_counts)
from nlivis.viz import projection_scatter

st.set_page_config(page_title="nlivis · projection", page_icon=":material/scatter_plot:", layout="wide")
selection.follow_url()
st.title("Projection of pooled representations")
st.caption("Each point is one pair: the vector the model pools before its classifier, laid out in 2-D. "
           "Hover a point to read the pair. Vectors, predictions and projections are computed once per checkpoint and "
           "sample and cached on disk, so changing the colouring never runs the model again.")
widgets.image_format_choice()
models = widgets.require_models("projection")

splits = loading.local_splits()
if not splits:
    st.info("No dataset split found: set a data folder on the Home page to project a split's pairs.")
    st.stop()

left, middle, right = st.columns([2, 2, 1])
model_label = left.selectbox("Model", [m.label for m in models], key="projection_model")
model = next(m for m in models if m.label == model_label)
trained = loading.training_splits([model])
split = middle.selectbox("Split", list(splits), key="projection_split", index=list(splits).index(loading.default_split([model], list(splits))),
                         format_func=lambda key: loading.split_label(key, trained))
method = right.radio("Method", METHODS, horizontal=True, key="projection_method", format_func=str.upper)
total = loading.split_size(split) or 0
size = total
if total > 20:
    size = st.slider("Pairs (random sample, fixed seed)", min_value=20, max_value=min(total, 5000),
                     value=min(1000, total), step=20, key="projection_size")
notes.show_protocol_notes([model])

items, error = loading.analysed_sample(split, size)
if error:
    st.error(error)
    st.stop()
if not items:
    st.info("The split has no pairs.")
    st.stop()
challenge.show_sample_truncation([model], items, split)

ids = [item.pair.id for item in items]
cache_key = f"{split}-sample{size}"
cache_dir = paths.projection_cache_dir()
if is_cached(model.path, cache_key, method, cache_dir=cache_dir):
    progress = None
else:
    progress = st.progress(0.0, text="starting …")


def report(message: str, fraction: float | None) -> None:
    if progress is not None:
        progress.progress(fraction if fraction is not None else 0.5, text=message)


try:
    projected = projected_pairs(model.path, cache_key, lambda: pooled_outputs(model.checkpoint, items),
                                method=method, ids=ids, progress=report, cache_dir=cache_dir)
except (ProjectionError, ValueError) as error:
    st.error(f"{model_label}: {error}")
    st.stop()
finally:
    if progress is not None:
        progress.empty()

coordinates = projected.coordinates
predicted = [model.labels[i] for i in projected.probabilities.argmax(axis=1)]
frame = pd.DataFrame({
    "id": ids, "x": coordinates[:, 0], "y": coordinates[:, 1],
    "premise": [item.pair.premise for item in items], "hypothesis": [item.pair.hypothesis for item in items],
    "gold": [item.pair.label or "(none)" for item in items], "prediction": predicted,
    "genre": [item.pair.genre or "(none)" for item in items],
})
frame["correctness"] = ["right" if g == p else "wrong" if g != "(none)" else "(no gold)" for g, p in zip(frame["gold"], frame["prediction"])]
colour_options = ["correctness", "gold", "prediction", "genre", "tag"]
colour = st.radio("Colour by", colour_options, horizontal=True, key="projection_colour",
                  help="right/wrong shows where the model errs; the others read the pairs or the model's answer")
if colour == "genre" and set(frame["genre"]) == {"(none)"}:
    st.info(f"{split} has no genres; colouring by gold label instead.")
    colour = "gold"
if colour == "tag":
    tagged, tag_error = loading.tagged_sample(split, size)
    if tag_error or tagged is None:
        st.error(tag_error)
        st.stop()
    counts = tag_counts(tagged.tags, ids)
    if not counts:
        st.info("No pair in this sample carries an annotation tag; colouring by gold label instead.")
        colour = "gold"
    else:
        present = sorted(counts)
        tag = st.selectbox("Tag (first shown: the one that splits the points most evenly)", present,
                           index=present.index(informative_tag(tagged.tags, ids)), key="projection_tag",
                           format_func=lambda t: f"{t} ({counts[t]} of {len(ids)} pairs)")
        frame["tag"] = [tag if tag in tagged.tags.get(pid, ()) else "other" for pid in frame["id"]]
frame["id"] = frame["id"].astype(str)
rows = loading.split_rows(split)
frame["split"], frame["row"] = split, [rows.get(pid, -1) for pid in frame["id"]]
figure = projection_scatter(frame, colour, hover=("premise", "hypothesis", "gold", "prediction"),
                            title=f"{model_label} · {split} · {len(frame)} pairs · {method.upper()}")
widgets.open_clicked_pair(widgets.show_figure(figure, "projection", f"{model_label}_projection_{split}_{method}", clickable=True))
st.caption(":material/touch_app: Click a point to open its pair in the Pair explorer with the loaded models.")
