"""DIIN's interaction space: channels of the premise×hypothesis tensor and of the maps built on it."""
from __future__ import annotations

import streamlit as st

from nlivis.app import loading, notes, selection, widgets
from nlivis.models.trace import FeatureMaps
from nlivis.viz import MISSING_MESSAGES, SELECTIONS, channel_grid

st.set_page_config(page_title="nlivis · DIIN interaction space", page_icon=":material/grid_on:", layout="wide")
selection.follow_url()
st.title("DIIN interaction space")
st.caption("Each panel is one channel over premise rows × hypothesis columns (viridis, as DIIN's Figure 2). "
           "Pick channels by index, by their highest activation, or by how much they vary over the pair.")
widgets.image_format_choice()
models = widgets.require_models("interaction-space view")

pair = widgets.pair_input("diin", models)
premise, hypothesis, _ = widgets.clean_pair(pair)
if not premise or not hypothesis:
    st.info("Type a premise and a hypothesis (both need at least one word).")
    st.stop()

results = {}
for model in models:
    result, error = loading.analyse_pair(model, premise, hypothesis)
    if error:
        st.error(f"{model.label}: {error}")
    elif result is not None:
        results[model.label] = result
with_maps = {label: r for label, r in results.items() if r.trace.of_type(FeatureMaps)}
without_maps = [label for label in results if label not in with_maps]
if len(without_maps) == 1:
    st.info(f"{without_maps[0]}: {MISSING_MESSAGES['feature_maps']}.")
elif without_maps:  # one box for all, so the grid is not pushed below a stack of them
    st.info(f"{len(without_maps)} loaded models have no 2-D interaction maps (only DIIN builds a premise×hypothesis "
            f"tensor): {', '.join(without_maps)}.")
if not with_maps:
    st.stop()

label = st.selectbox("Model", list(with_maps), key="diin_model")
result = with_maps[label]
notes.show_protocol_notes([m for m in models if m.label == label])
st.markdown(f"**{label}** predicts **{result.predicted}**")
for notice in result.notices:
    st.caption(f"{notes.NOTE_ICON} {notice}")
stages = result.trace.of_type(FeatureMaps)
left, middle, right = st.columns([2, 2, 1])
first_learned = next((i for i, name in enumerate(stages) if name.startswith("dense_block")), 0)  # learned 3×3 maps
stage_name = left.selectbox("Stage", list(stages), index=first_learned, key="diin_stage",
                            format_func=lambda n: f"{n} ({stages[n].maps.shape[1]} channels, "
                                                  f"{stages[n].maps.shape[2]}×{stages[n].maps.shape[3]})")
entry = stages[stage_name]
n_channels = int(entry.maps.shape[1])
channel_choice = middle.radio("Choose channels", SELECTIONS, horizontal=True, key="diin_selection",
                         format_func=lambda s: {"index": "by index", "max_activation": "highest activation",
                                                "variance": "highest variance"}[s])
k = right.number_input("How many", min_value=1, max_value=max(1, min(n_channels, 48)), value=min(8, n_channels), key="diin_k")
channels = None
if channel_choice == "index":
    channels = st.multiselect("Channels", list(range(n_channels)), default=list(range(min(int(k), n_channels))),
                              key=f"diin_channels_{stage_name}")
    if not channels:
        st.info("Select at least one channel.")
        st.stop()
shared = st.toggle("One colour range for all panels", value=False, key="diin_shared")
figure = channel_grid(entry, 0, result.premise_tokens, result.hypothesis_tokens, channels=channels,
                      selection=channel_choice, k=int(k), shared_scale=shared, label=label)
widgets.show_figure(figure, f"diin_{stage_name}", f"diin_{stage_name}")
