"""Gates: how open each gate is per token and layer for the current pair (one section per model with gates,
drawn when opened, all its gates in one chart), and on average over a sample of a split."""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import streamlit as st

from nlivis.app import cache, paths, state
from nlivis.app.cache import figures as cached_figures
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls, figures, pairs, samples
from nlivis.app.components.frame import protocol_notes
from nlivis.app.text import md
from nlivis.models.trace import Gate
from nlivis.viz.drawable import MISSING_MESSAGES
from nlivis.viz.vega.gates import GATE_DIMS_SHOWN, dimension_windows, gate_summary_bars

PAGE = "gates"
TABS = ("One pair", "Over a dataset split")


def page(models: Sequence[cache.Model]) -> None:
    with_gates = [m for m in models if Gate in m.trace_types]  # declared by each model's config
    for model in models:
        if model not in with_gates:
            st.caption(f"{md(model.name)}: {MISSING_MESSAGES['gates']}.")
    if not with_gates:
        st.info("None of the loaded models has gates.")
        state.stop()
    state.pair()  # the pair stays in the URL on either tab, so switching tabs after a link keeps it
    tab, (pair_tab, split_tab) = controls.tabs(PAGE, "tab", TABS)
    if tab == TABS[0]:
        with pair_tab:
            one_pair(with_gates, models)
    else:
        with split_tab:
            over_split(with_gates)


def one_pair(with_gates: Sequence[cache.Model], models: Sequence[cache.Model]) -> None:
    shown = pairs.picker(PAGE, models)
    premise, hypothesis, _ = pairs.clean(shown)
    if not premise or not hypothesis:
        st.info("Type a premise and a hypothesis (both need at least one word).")
        return
    pairs.describe(shown)
    pairs.came_from(PAGE)
    pairs.links_to_other_pages(paths.GATES)
    names = [m.name for m in with_gates]
    opened = controls.open_sections(PAGE, "open", names, names[:1])
    now_open = []
    for model in with_gates:
        section = st.expander(f"{md(model.name)} · gates", expanded=False, key=opened[model.name], on_change="rerun")
        if not section.open:  # a closed section draws nothing: all figures of all models took 13 s
            continue
        now_open.append(model.name)
        with section:
            model_gates(model, shown)
    controls.remember_sections(PAGE, "open", now_open, names[:1])


def model_gates(model: cache.Model, shown: cache.ShownPair) -> None:
    reading = pairs.read_all([model], shown).get(model.name)
    if reading is None:
        return
    gates = reading.trace.of_type(Gate)
    verdict = "" if not shown.gold else (" (right)" if reading.predicted == shown.gold else f" (wrong: gold {md(shown.gold)})")
    st.markdown(f"predicts **{md(reading.predicted)}**{verdict} · {len(gates)} gate entries")
    layers = sorted({g.layer for g in gates.values()})
    left, right = st.columns([2, 1])
    # the first layer by default: every layer's strips (twelve for a GCNN) were the page's whole warm excess (issue 30)
    chosen_layers = controls.multiselect(PAGE, f"layers_{model.name}", "Layers", layers, layers[:1], where=left,
                                         help="each layer adds its gates' strips to the chart")
    widest = max(int(g.values.shape[-1]) for g in gates.values())
    windows = dimension_windows(widest)
    first_dim = 0
    if len(windows) > 1:
        first_dim = controls.select(PAGE, f"dims_{model.name}", f"Dimensions (of {widest})", windows, 0, where=right,
                                    format_func=lambda start: f"{start}–{min(start + GATE_DIMS_SHOWN, widest) - 1}")
    # a narrower gate than the widest shows its last window
    entries = [(name, min(first_dim, dimension_windows(int(entry.values.shape[-1]))[-1]))
               for name, entry in gates.items() if entry.layer in chosen_layers]
    if not entries:
        return
    st.caption(shown_caption(len(entries), chosen_layers, layers))
    figure = cached_figures.gate_strips_figure(model, shown.premise, shown.hypothesis, entries, model.name)
    figures.show(figure, f"gates_{model.name}", f"{model.name}_gates")  # one Vega view for all its gates


def shown_caption(strips: int, chosen: Sequence[int], layers: Sequence[int]) -> str:
    """Which gates the chart below shows and, when some layers are left out (all but the first, by default),
    which, one choice away."""
    text = f"Shown: {strips} gate{'s' if strips != 1 else ''} of layer{'s' if len(chosen) != 1 else ''} " \
           f"{', '.join(map(str, sorted(chosen)))}."
    hidden = [str(layer) for layer in layers if layer not in chosen]
    if hidden:
        text += f" Not shown: layer{'s' if len(hidden) != 1 else ''} {', '.join(hidden)} (add under Layers)."
    return text


def over_split(with_gates: Sequence[cache.Model]) -> None:
    chosen = samples.split_and_size(PAGE, with_gates, "gates over a split", default_size=100, maximum=1000, step=10)
    if chosen is None:
        return
    split, size = chosen
    if not samples.computed(PAGE, "Compute gate statistics",
                            f"runs every model with gates over {size} pairs of {split} (spaCy first)", f"{split}:{size}"):
        return
    items, error = cached_samples.analysed_sample(split, size)
    if error:
        st.error(md(error))
        return
    tables = []
    progress = st.progress(0.0, text="running the models …")
    for i, model in enumerate(with_gates):
        table, problem = cached_samples.gate_statistics(model, split, size)
        if problem:
            st.error(f"{md(model.name)}: {md(problem)}")
        elif not table.empty:
            tables.append(table)
        progress.progress((i + 1) / len(with_gates), text=f"{model.name} done")
    progress.empty()
    samples.sample_truncation(with_gates, items, split)
    if not tables:
        return
    summary = pd.concat(tables, ignore_index=True)
    protocol_notes(with_gates)
    title = f"mean gate value over {size} pairs of {split} (real tokens only; error bars: std)"
    figures.show(gate_summary_bars(summary, title, colours={m.name: m.colour for m in with_gates}), "gate_summary",
                 f"gates_{split}")
    st.dataframe(summary, hide_index=True, width="stretch")
