"""Attribution: which tokens decide (gradients, integrated gradients, occlusion) beside what the attention says,
for the current pair and every loaded model; over a split, faithfulness (ERASER), agreement and plausibility."""
from __future__ import annotations

import streamlit as st

from nlivis.analysis.attribution import ATTENTION_RULE, METHODS, SIGNED_METHODS
from nlivis.analysis.faithfulness import FAITHFULNESS_METHODS, faithfulness_table
from nlivis.app import attribution, loading, notes, selection, widgets
from nlivis.app.paths import data_root
from nlivis.data.highlights import find_highlights_file
from nlivis.viz.attribution import agreement_boxes, faithfulness_bars, plausibility_bars, token_strips

st.set_page_config(page_title="nlivis · attribution", page_icon=":material/highlight:", layout="wide")
selection.follow_url()
st.title("Attribution")
st.caption("Salience at each token's whole input representation (word vector and, where the model reads them, char "
           "CNN, POS and exact match), from the representation of a removed token, with respect to the predicted "
           "class unless you pick one. Signed methods (" + ", ".join(sorted(SIGNED_METHODS)) + "): red supports the "
           "class, blue speaks against it. Each row is scaled by its largest |score|; hover for raw values.")
widgets.image_format_choice()
models = widgets.require_models("attribution view")
SALIENCE = [m for m in METHODS if m != "attention"]

tab_pair, tab_split = st.tabs(["One pair", "Over a dataset split"])
with tab_pair:
    pair = widgets.pair_input("attribution", models)
    premise, hypothesis, _ = widgets.clean_pair(pair)
    left, right = st.columns([3, 1])
    methods = left.multiselect("Methods", SALIENCE, default=SALIENCE, key="attribution_methods")
    labels = sorted({label for model in models for label in model.labels})
    target = right.selectbox("Class to explain", ["predicted"] + labels, key="attribution_target")
    if not premise or not hypothesis:
        st.info("Type a premise and a hypothesis (both need at least one word).")
    else:
        for m, model in enumerate(models):
            with st.spinner(f"{model.label}: computing attributions …"):
                scores, error = attribution.explain(model, premise, hypothesis, [*methods, "attention"],
                                                    None if target == "predicted" else target)
            if error:
                st.error(f"{model.label}: {error}")
                continue
            any_scores = next(iter(scores.values()), None)
            if any_scores is None:
                st.info(f"{model.label}: choose at least one method.")
                continue
            predicted, explained = model.labels[any_scores.predicted], model.labels[any_scores.target]
            with st.expander(f"{model.label} · predicts {predicted} · explaining {explained}", expanded=m == 0):
                salience, attention = st.columns(2)  # equal widths: the attention strips were too narrow to read
                with salience:
                    rows = {name: (scores[name].premise_scores, scores[name].hypothesis_scores)
                            for name in methods if name in scores}
                    if rows:
                        widgets.show_figure(token_strips(rows, any_scores.premise_tokens, any_scores.hypothesis_tokens,
                                                         f"salience for {explained}"),
                                            f"attribution_salience_{m}", f"{model.label}_salience")
                    ig = scores.get("integrated_gradients")
                    if ig is not None and ig.completeness_gap is not None:
                        st.caption(f"Integrated gradients: {ig.note}; completeness gap {ig.completeness_gap:+.4f} "
                                   f"at {ig.steps} steps (Σ attributions vs. f(x) − f(baseline) = "
                                   f"{ig.completeness_difference:+.4f}, relative).")
                        if ig.completeness_note:
                            st.info(f"Completeness: {ig.completeness_note}.")
                with attention:
                    summary = scores.get("attention")
                    if summary is None:
                        st.info(f"{model.label} traces no attention that can be reduced to token scores.")
                    else:
                        layer_rows = {"average": (summary.premise_scores, summary.hypothesis_scores), **summary.layers}
                        widgets.show_figure(token_strips(layer_rows, summary.premise_tokens, summary.hypothesis_tokens,
                                                         "attention summary"),
                                            f"attribution_attention_{m}", f"{model.label}_attention")
                        st.caption(ATTENTION_RULE)

with tab_split:
    splits = loading.local_splits()
    if not splits:
        st.info("No dataset split found: set a data folder on the Home page to measure faithfulness over a split.")
    else:
        split_names = list(splits)
        left, middle, right = st.columns([2, 1, 2])
        start = loading.default_split(models, split_names)
        split = left.selectbox("Split", split_names, index=split_names.index(start) if start in split_names else 0,
                               key="attribution_split")
        size = middle.number_input("Sample size (pairs)", min_value=5, max_value=2000, value=50, step=5,
                                   key="attribution_size", help="pairs drawn at random (fixed seed 0); larger is slower")
        chosen = right.multiselect("Methods", list(FAITHFULNESS_METHODS), default=list(FAITHFULNESS_METHODS),
                                   key="attribution_split_methods")
        st.caption("ERASER (DeYoung et al., 2020): comprehensiveness = drop of the predicted class's probability when "
                   "the top-k% tokens are deleted, sufficiency = drop when only they are kept, AOPC over k = 1, 5, 10, "
                   "20, 50%; 95% bootstrap intervals. `random` is the floor to beat (each pair averaged over 10 random "
                   "rankings); `comprehensiveness_minus_random` is each method's paired difference from it. Removed "
                   "tokens are deleted and the pair re-featurized, the same for every method. Agreement with "
                   "attention (Kendall τ) and plausibility rank signed methods by |score|; the signed τ is its own column.")
        if st.button("Compute faithfulness", key="attribution_compute", disabled=not chosen):
            items, error = loading.analysed_sample(split, int(size))
            if error:
                st.error(error)
            else:
                highlights_file = find_highlights_file(data_root()) if data_root() is not None else None
                progress = st.progress(0.0, text="computing …")
                summaries = {}
                steps = len(models) * len(chosen)
                done = [0]

                def advance(method: str, label: str = "") -> None:
                    progress.progress(min(1.0, done[0] / steps), text=f"{label}: {method} …")
                    done[0] += 1

                for model in models:
                    summaries[model.label] = attribution.split_faithfulness(
                        model, items, split, 0, chosen, highlights_file,
                        on_method=lambda method, label=model.label: advance(method, label))
                progress.progress(1.0, text="done")
                st.session_state["attribution_summary"] = (split, len(items), summaries)
        stored = st.session_state.get("attribution_summary")
        if stored:
            split_used, size_used, summaries = stored
            notes.show_protocol_notes(models)
            table = faithfulness_table(summaries)
            where = f"{size_used} pairs of {split_used}"
            widgets.show_figure(faithfulness_bars(table, "comprehensiveness", f"comprehensiveness over {where}"),
                                "attribution_comprehensiveness", f"comprehensiveness_{split_used}")
            widgets.show_figure(faithfulness_bars(table, "sufficiency", f"sufficiency over {where}"),
                                "attribution_sufficiency", f"sufficiency_{split_used}")
            st.dataframe(table, hide_index=True, width="stretch")
            taus = attribution.agreement_frame(summaries)
            if taus.empty:
                st.info("No agreement to show: it needs attention and at least one salience method for a model.")
            else:
                widgets.show_figure(agreement_boxes(taus, f"Kendall τ between attention and salience, per pair ({where})"),
                                    "attribution_agreement", f"agreement_{split_used}")
            if table["plausibility_pairs"].sum() == 0:
                st.info("No plausibility: e-SNLI highlights exist only for SNLI dev rows 0–3,277 (hypothesis side), "
                        "and none of these pairs has one.")
            else:
                widgets.show_figure(plausibility_bars(table, f"plausibility against e-SNLI highlights ({where})"),
                                    "attribution_plausibility", f"plausibility_{split_used}")
