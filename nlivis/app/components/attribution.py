"""Attribution: which tokens decide (gradients, integrated gradients, occlusion) beside what the attention says,
for the current pair and every loaded model; over a split, faithfulness (ERASER), agreement and plausibility."""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import streamlit as st

from nlivis.analysis.attribution import ATTENTION_RULE, METHODS, SIGNED_METHODS
from nlivis.analysis.faithfulness import FAITHFULNESS_METHODS, faithfulness_table
from nlivis.app import cache, paths, state
from nlivis.app.cache import analyses as cached_analyses
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls, figures, pairs, samples
from nlivis.app.components.frame import protocol_notes
from nlivis.app.text import md
from nlivis.data.highlights import find_highlights_file
from nlivis.viz.vega.attribution import agreement_boxes, faithfulness_bars, plausibility_bars, token_strips

PAGE = "attribution"
TABS = ("One pair", "Over a dataset split")
SALIENCE = [m for m in METHODS if m != "attention"]
CAPTION = ("Salience at each token's whole input representation (word vector and, where the model reads them, char "
           "CNN, POS and exact match), from the representation of a removed token, with respect to the predicted "
           "class unless you pick one. Signed methods (" + ", ".join(sorted(SIGNED_METHODS)) + "): red supports the "
           "class, blue speaks against it. Each row is scaled by its largest |score|; hover for raw values.")


def page(models: Sequence[cache.Model]) -> None:
    state.pair()  # the pair stays in the URL on either tab, so switching tabs after a link keeps it
    tab, (pair_tab, split_tab) = controls.tabs(PAGE, "tab", TABS)
    if tab == TABS[0]:
        with pair_tab:
            one_pair(models)
    else:
        with split_tab:
            over_split(models)


def one_pair(models: Sequence[cache.Model]) -> None:
    shown = pairs.picker(PAGE, models)
    premise, hypothesis, _ = pairs.clean(shown)
    pairs.describe(shown)
    pairs.came_from(PAGE)
    pairs.links_to_other_pages(paths.ATTRIBUTION)
    left, right = st.columns([3, 1])
    methods = controls.multiselect(PAGE, "methods", "Methods", SALIENCE, SALIENCE, where=left)
    labels = sorted({label for model in models for label in model.labels})
    target = controls.select(PAGE, "target", "Class to explain", ["predicted"] + labels, "predicted", where=right)
    if not premise or not hypothesis:
        st.info("Type a premise and a hypothesis (both need at least one word).")
        return
    names = [m.name for m in models]
    opened = controls.open_sections(PAGE, "open", names, names[:1])
    now_open = []
    for model in models:
        section = st.expander(f"{md(model.name)} · salience and attention", key=opened[model.name], on_change="rerun")
        if not section.open:  # a closed section computes nothing (integrated gradients cost the most)
            continue
        now_open.append(model.name)
        with section:
            model_attribution(model, premise, hypothesis, methods, None if target == "predicted" else target, shown)
    controls.remember_sections(PAGE, "open", now_open, names[:1])


def model_attribution(model: cache.Model, premise: str, hypothesis: str, methods: list[str], target: str | None,
                      shown: cache.ShownPair) -> None:
    with st.spinner(f"{model.name}: computing attributions …"):
        scores, error = cached_analyses.explain(model, premise, hypothesis, [*methods, "attention"], target)
    if error:
        st.error(f"{md(model.name)}: {md(error)}")
        return
    any_scores = next(iter(scores.values()), None)
    if any_scores is None:
        st.info(f"{md(model.name)}: choose at least one method.")
        return
    predicted, explained = model.labels[any_scores.predicted], model.labels[any_scores.target]
    verdict = "" if not shown.gold else (" (right)" if predicted == shown.gold else f" (wrong: gold {md(shown.gold)})")
    st.markdown(f"predicts **{md(predicted)}**{verdict} · explaining **{md(explained)}**")
    # one strip above the other, each the full width: side by side, token labels overlapped on real pairs
    rows = {name: (scores[name].premise_scores, scores[name].hypothesis_scores) for name in methods if name in scores}
    if rows:
        figures.show(token_strips(rows, any_scores.premise_tokens, any_scores.hypothesis_tokens,
                                  f"salience for {explained}"), f"attribution_salience_{model.name}",
                     f"{model.name}_salience")
    ig = scores.get("integrated_gradients")
    if ig is not None and ig.completeness_gap is not None:
        st.caption(f"Integrated gradients: {md(ig.note)}; completeness gap {ig.completeness_gap:+.4f} at {ig.steps} "
                   f"steps (Σ attributions vs. f(x) − f(baseline) = {ig.completeness_difference:+.4f}, relative).")
        if ig.completeness_note:
            st.info(f"Completeness: {md(ig.completeness_note)}.")
    summary = scores.get("attention")
    if summary is None:
        st.info(f"{md(model.name)} traces no attention that can be reduced to token scores.")
    else:
        layer_rows = {"average": (summary.premise_scores, summary.hypothesis_scores), **summary.layers}
        figures.show(token_strips(layer_rows, summary.premise_tokens, summary.hypothesis_tokens, "attention summary"),
                     f"attribution_attention_{model.name}", f"{model.name}_attention")
        st.caption(md(ATTENTION_RULE))


def over_split(models: Sequence[cache.Model]) -> None:
    chosen = samples.split_and_size(PAGE, models, "faithfulness over a split", default_size=50, maximum=2000, step=5,
                                    minimum=5)
    if chosen is None:
        return
    split, size = chosen
    methods = controls.multiselect(PAGE, "split_methods", "Methods", list(FAITHFULNESS_METHODS), list(FAITHFULNESS_METHODS))
    st.caption("ERASER (DeYoung et al., 2020): comprehensiveness = drop of the predicted class's probability when the "
               "top-k% tokens are deleted, sufficiency = drop when only they are kept, AOPC over k = 1, 5, 10, 20, 50%; "
               "95% bootstrap intervals. `random` is the floor to beat (each pair averaged over 10 random rankings); "
               "`comprehensiveness_minus_random` is each method's paired difference from it. Removed tokens are deleted "
               "and the pair re-featurized, the same for every method. Agreement with attention (Kendall τ) and "
               "plausibility rank signed methods by |score|; the signed τ is its own column. The pooled τ "
               "(`median_tau_attention`) is read beside `median_tau_membership_baseline`, and the τ within each "
               "sentence beside both (see under the agreement plot).")
    if not methods:
        st.info("Choose at least one method.")
        return
    if not samples.computed(PAGE, "Compute faithfulness", f"every method for every model over {size} pairs of {split}",
                            f"{split}:{size}:{'+'.join(methods)}"):
        return
    items, error = cached_samples.analysed_sample(split, size)
    if error:
        st.error(md(error))
        return
    root = paths.data_root()
    highlights_file = find_highlights_file(root) if root is not None else None
    progress = st.progress(0.0, text="computing …")
    summaries = {}
    steps, done = len(models) * len(methods), [0]

    def advance(method: str, name: str = "") -> None:
        progress.progress(min(1.0, done[0] / steps), text=f"{name}: {method} …")
        done[0] += 1

    for model in models:
        summaries[model.name] = cached_samples.split_faithfulness(model, items, split, 0, methods, highlights_file,
                                                         on_method=lambda method, name=model.name: advance(method, name))
    progress.empty()
    protocol_notes(models)
    colours = {m.name: m.colour for m in models}
    table = faithfulness_table(summaries)
    where = f"{len(items)} pairs of {split}"
    figures.show(faithfulness_bars(table, "comprehensiveness", f"comprehensiveness over {where}", colours=colours),
                 "attribution_comprehensiveness", f"comprehensiveness_{split}")
    figures.show(faithfulness_bars(table, "sufficiency", f"sufficiency over {where}", colours=colours),
                 "attribution_sufficiency", f"sufficiency_{split}")
    st.dataframe(table, hide_index=True, width="stretch")
    show_agreement(agreement_frame(summaries), where, split, colours)
    if table["plausibility_pairs"].sum() == 0:
        st.info("No plausibility: e-SNLI highlights exist only for SNLI dev rows 0–3,277 (hypothesis side), and none of "
                "these pairs has one.")
    else:
        figures.show(plausibility_bars(table, f"plausibility against e-SNLI highlights ({where})", colours=colours),
                     "attribution_plausibility", f"plausibility_{split}")


AGREEMENT_MEASURES = {"pooled": "pooled", "membership baseline": None, "within premise": "premise",
                      "within hypothesis": "hypothesis"}
"""The agreement measures the page draws, with the `summarize` part (`agreement_taus`) each comes from; the
membership baseline comes from `membership_taus` and has no attention layer."""
AGREEMENT_TEXT = (
    "**Agreement with attention**: Kendall τ per pair, signed salience ranked by |score|. Pooled over both sentences "
    "the τ mostly measures which sentence a token is in: a token's attention sums over the *other* sentence, so its "
    "scale follows that sentence's length and the hypothesis tokens often all outrank the premise tokens. So the "
    "pooled τ is shown beside the **membership baseline**, the τ between a plain \"is a hypothesis token\" indicator "
    "and the salience (what an attention that knows only the sentence would reach); **within premise** and **within "
    "hypothesis** rank one sentence's tokens and are free of that artefact. Undefined τ (one-token sentences, "
    "constant scores) are left out; the table's `median_tau_*` columns give the medians "
    "(`median_tau_within_sentences`: both sentences' τ together).")


def show_agreement(taus: pd.DataFrame, where: str, split: str, colours: dict[str, str]) -> None:
    """The per-pair τ of one attention layer (chosen when the models have more than the average), each measure
    beside the membership baseline, with the text that says how to read them."""
    layers = list(dict.fromkeys(taus.loc[taus["measure"] == "pooled", "layer"]))
    if not layers:
        st.info("No agreement to show: it needs attention and at least one salience method for a model.")
        return
    layer = layers[0] if len(layers) == 1 else controls.select(PAGE, "agreement_layer", "Attention layer", layers,
                                                               "average")
    shown = taus[(taus["layer"] == layer) | (taus["measure"] == "membership baseline")]
    figures.show(agreement_boxes(shown, f"Kendall τ between attention ({layer}) and salience, per pair ({where})",
                                 colours=colours), "attribution_agreement", f"agreement_{split}")
    st.caption(md(AGREEMENT_TEXT))


def agreement_frame(summaries: dict[str, dict]) -> pd.DataFrame:
    """One row per (model, salience method, measure, attention layer, pair) with its Kendall τ (undefined ones left
    out): the `AGREEMENT_MEASURES`, the membership baseline with no layer ("")."""
    rows = []
    for model, summary in summaries.items():
        for method, entry in summary["methods"].items():
            if "agreement_taus" not in entry:
                continue
            for measure, part in AGREEMENT_MEASURES.items():
                by_layer = {"": entry["membership_taus"]} if part is None else entry["agreement_taus"][part]
                rows += [{"model": model, "method": method, "measure": measure, "layer": layer, "tau": tau}
                         for layer, taus in by_layer.items() for tau in taus if tau == tau]
    return pd.DataFrame(rows, columns=["model", "method", "measure", "layer", "tau"])
