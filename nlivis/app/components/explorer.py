"""The Pair explorer's parts: why the pair is here (gold label, tags, which models are wrong, the list it came
from), every model's prediction, the previous pair beside this one, all models at a glance, and each model's
alignments layer by layer; on its Edits tab, the pair's edits (`components.edits`)."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

import streamlit as st

from nlivis.app import background, cache, paths, state
from nlivis.app.cache import figures as cached_figures
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls, edits, figures, heads, pairs
from nlivis.app.components.frame import NOTE_ICON, protocol_notes, require_models
from nlivis.app.text import markdown_table, md
from nlivis.models.trace import Alignment, MemoryKeys
from nlivis.viz.drawable import MISSING_MESSAGES
from nlivis.viz.head_grid import head_family
from nlivis.viz.overview import glance_entries
from nlivis.viz.vega.bars import probability_bars
from nlivis.viz.vega.heatmaps import alignment_heatmap, memory_keys_heatmap
from nlivis.workflows.reading import PairReading

_HISTORY = "nlivis_pair_history"
PAGE = "explorer"
TABS = ("Predictions and alignments", "Edits")
"""The open tab is view state (`tab=Edits`); only the open one is computed."""


def why_here(models: Sequence[cache.Model], shown: cache.ShownPair, readings: dict[str, PairReading]) -> None:
    """Gold label, tags (gold and automatic, marked), which models get it wrong, the list it was opened from
    (with Previous / Next) and links to the same pair on the other pair pages."""
    parts = []
    gold, automatic = pairs.pair_tags(shown)
    tags = [f"{md(t)} *(gold)*" for t in sorted(gold)]
    if automatic is None:  # the tagger is still loading in the background: the page does not wait for it
        parts.append(f"**Tags:** {', '.join(tags) + ', ' if tags else ''}automatic tags are being computed (spaCy's "
                     "parser and WordNet load once after a launch; they show on the next run of the page)")
    else:
        found, unavailable = automatic
        tags += [f"{md(t)} *(automatic)*" for t in sorted(found - gold)]
        parts.append(f"**Tags:** {', '.join(tags) if tags else 'none'}")
        if unavailable:
            parts.append(f"({md('; '.join(f'{k}: {v}' for k, v in unavailable.items()))})")
    if shown.gold:
        wrong = [name for name, reading in readings.items() if reading.predicted != shown.gold]
        right = [name for name in readings if name not in wrong]
        parts.append(f"**Wrong:** :red[{md(', '.join(wrong))}]" if wrong else "**Every model is right**")
        if wrong and right:
            parts.append(f"right: {md(', '.join(right))}")
    st.markdown(" · ".join(parts))
    taxonomy = cached_samples.pair_taxonomy(shown.id, shown.premise, shown.hypothesis)
    if taxonomy is not None:
        references = ", ".join(f"{md(name)} **{md(label)}**" for name, label in taxonomy["references"].items())
        st.markdown(f"**TaxiNLI** (pair {md(str(taxonomy['pair_id']))}, genre {md(str(taxonomy['genre']))}): "
                    f"{md(', '.join(taxonomy['categories'])) or 'no category'} · {references}")
    pairs.came_from("explorer", ahead=lambda upcoming: read_ahead(models, upcoming))
    pairs.links_to_other_pages(paths.EXPLORER)


def read_ahead(models: Sequence[cache.Model], shown: cache.ShownPair) -> None:
    """In the background once pages are idle (`background.ahead`): what this page computes for `shown`, the pair
    Next opens — every model's reading, its automatic tags, its probabilities, the overview grid and the first
    model's alignment heatmaps, each figure drawn as the page will draw it (`figures.draw_ahead`: ~50 ms of the
    server's converter each) — kept in the caches the page reads, so Next shows it without computing it (its
    script 0.26 → 0.08 CPU s: bench/script_time.py, bench/RESULTS.md issue 30, session 23)."""
    premise, hypothesis, _ = pairs.clean(shown)
    if not premise or not hypothesis:
        return
    dark = figures.dark_theme()  # the page's look, read here: the background thread has no page

    def work() -> None:
        readings = {m.name: r for m in models if (r := cache.read_pair(m, premise, hypothesis)[0]) is not None}
        background.automatic_tags(shown.premise, shown.hypothesis)
        read = [m for m in models if m.name in readings]
        for figure in probability_figures(read, readings).values():  # a pair of a list opens without the previous
            figures.draw_ahead(figure, dark)
        figures.draw_ahead(cached_figures.overview_figure(read, shown.premise, shown.hypothesis, "all loaded models"),
                           dark)
        first = next(iter(read), None)
        if first is None or Alignment not in first.trace_types or head_family(readings[first.name].trace) is not None:
            return
        reading = readings[first.name]
        for entry_name in reading.trace.of_type(Alignment):
            figures.draw_ahead(cached_figures.alignment_figure(first, reading.premise, reading.hypothesis, entry_name,
                                                               entry_name), dark, columns=2)

    background.ahead(("explorer ahead", tuple((m.name, m.path) for m in models), premise, hypothesis), work)


def predictions(models: Sequence[cache.Model], shown: cache.ShownPair, readings: dict[str, PairReading]) -> None:
    """One line per model: its label, probabilities and notes; a model that is wrong on a labelled pair is marked."""
    protocol_notes(models)
    # every label any model reads the pair over (a Quora model's beside an NLI one's: a missing one shows "–")
    labels = dict.fromkeys(label for reading in readings.values() for label in reading.labels)
    columns = ["model", "predicted", *(f"P({label})" for label in labels)]
    columns += ["gold", "right?"] if shown.gold else []
    rows, wrong = [], []
    for name, reading in readings.items():
        probs = dict(zip(reading.labels, reading.probs))
        right = reading.predicted == shown.gold
        rows.append([name, reading.predicted, *(probs.get(label) for label in labels),
                     *([shown.gold, "✓ right" if right else "✗ wrong"] if shown.gold else []), "; ".join(reading.notices)])
        wrong.append(bool(shown.gold) and not right)
    # Markdown, not a data grid: one line per model needs no sorting or scrolling, shows its notes whole, and spares
    # a new tab the grid's code (`text.markdown_table`); a wrong model's line is marked in red
    st.markdown(markdown_table(columns + ["notes"], rows, {c: ".3f" for c in columns if c.startswith("P(")}, wrong))


def remember(readings: dict[str, PairReading]) -> dict[str, PairReading] | None:
    """Keep the last two distinct pairs' readings (this session); returns the previous pair's, or None."""
    history: list[dict[str, PairReading]] = st.session_state.get(_HISTORY, [])
    key = lambda rs: next(((r.premise, r.hypothesis) for r in rs.values()), None)  # noqa: E731
    if history and key(history[-1]) == key(readings):
        history[-1] = readings
    else:
        history = (history + [readings])[-2:]
    st.session_state[_HISTORY] = history
    return history[0] if len(history) == 2 else None


def probabilities(models: Sequence[cache.Model], readings: dict[str, PairReading],
                  previous: dict[str, PairReading] | None) -> bool:
    """Class probabilities per model (beside the previous pair's when the user wants); returns whether the
    previous pair is shown beside this one. The comparison starts on for a typed pair (an edit is read against
    the pair before it) and off for a pair of a split, so stepping through a list and Back show the same screen."""
    colours = {m.name: m.colour for m in models}
    compare = False
    if previous:
        before = next(iter(previous.values()))
        compare = st.toggle(f"Show the previous pair beside this one (premise “{md(before.premise[:60])}”, "
                            f"hypothesis “{md(before.hypothesis[:60])}”)", value=not state.pair().is_row,
                            key="explorer_compare")
    for i, (labels, figure) in enumerate(probability_figures(models, readings, compare).items()):
        if compare and previous:
            now_col, before_col = st.columns(2)
            figures.show(figure, f"probs_{i}", "probabilities", where=now_col, columns=2)
            old = {m: r.probs for m, r in previous.items() if tuple(r.labels) == labels}
            if old:
                figures.show(probability_bars(old, list(labels), "previous pair", colours=colours), f"probs_prev_{i}",
                             "probabilities_previous", where=before_col, columns=2)
        else:
            figures.show(figure, f"probs_{i}", "probabilities")
    return compare


def probability_figures(models: Sequence[cache.Model], readings: dict[str, PairReading],
                        beside_previous: bool = False) -> dict[tuple[str, ...], dict[str, Any]]:
    """A `probability_bars` spec per set of labels the models read the pair over (a MultiNLI model and a Quora
    one do not share bars), each model in its colour; titled "this pair" when drawn `beside_previous`."""
    colours = {m.name: m.colour for m in models}
    by_labels: dict[tuple[str, ...], dict[str, list[float]]] = defaultdict(dict)
    for name, reading in readings.items():
        by_labels[tuple(reading.labels)][name] = reading.probs
    title = {"title": "this pair"} if beside_previous else {}
    return {labels: probability_bars(probs, list(labels), colours=colours, **title)
            for labels, probs in by_labels.items()}


def at_a_glance(models: Sequence[cache.Model], shown: cache.ShownPair, readings: dict[str, PairReading]) -> None:
    st.subheader("At a glance")
    st.caption("One row per model: its main alignment (last layer, both directions), DIIN's interaction summary and "
               "AMN's memory keys, on shared token axes; details per model below.")
    read = [m for m in models if m.name in readings]  # the figure is built once per pair (`cache.figures.overview_figure`)
    figures.show(cached_figures.overview_figure(read, shown.premise, shown.hypothesis, "all loaded models"), "overview",
                 "overview_all_models")


def alignments(models: Sequence[cache.Model], readings: dict[str, PairReading],
               previous: dict[str, PairReading] | None) -> None:
    """Each model's alignments layer by layer (and AMN's memory keys) in an expander. The first is open when it shows
    more than its row of the glance above (`beyond_glance`) or the previous pair beside this one, so that a model's
    one layer is not drawn twice on the page."""
    st.subheader("Alignments")
    st.caption("Rows attend over columns; padding is cut; softmax and sparsemax weights share the range 0–1 unless they "
               "span less than a tenth of it (then the title states their own range). Models with several layers "
               "(ESAN blocks, GCNN aggregation) show one row per layer; a multi-head model (MiniLM) shows one "
               "layer × head grid. A model's section opens on a click; the first opens by itself when it shows more "
               "than its row of the glance above.")
    by_name = {m.name: m for m in models}
    direction = heads.block_choice(readings.values())
    for m, (name, reading) in enumerate(readings.items()):
        output = reading.trace["output"]
        declared = by_name[name].trace_types
        if Alignment not in declared and MemoryKeys not in declared:
            st.caption(f"{NOTE_ICON} {md(name)}: {MISSING_MESSAGES['alignment']}.")
            continue
        opened = m == 0 and (previous is not None or beyond_glance(reading))
        section = st.expander(f"{md(name)} · output normalised by {md(output.kind)}", expanded=opened,
                              key=f"explorer_open_{name}", on_change="rerun")
        if not section.open:  # a closed section draws nothing
            continue
        with section:
            old = previous.get(name) if previous else None
            if direction is not None and head_family(reading.trace) is not None:
                heads.section(m, name, reading, old, direction)  # one grid, not a heatmap per head
            else:
                _model_alignments(m, by_name[name], reading, old)


def beyond_glance(reading: PairReading) -> bool:
    """Whether a model's section shows more than its row of the glance (`viz.overview.glance_entries`): an alignment
    or memory keys the glance leaves out (another layer, a self-alignment, a head), or a grid of heads."""
    drawn = {name for name, _ in glance_entries(reading.trace)}
    shown = set(reading.trace.of_type(Alignment)) | set(reading.trace.of_type(MemoryKeys))
    return bool(shown - drawn) or head_family(reading.trace) is not None


def _model_alignments(m: int, model: cache.Model, reading: PairReading, old: PairReading | None) -> None:
    """The model's alignments layer by layer (this pair's figures built once per pair: `cache.figures.alignment_figure`),
    beside the previous pair's when `old` is given, then its memory keys."""
    name = model.name
    layers: dict[int, list[tuple[str, Alignment]]] = defaultdict(list)
    for entry_name, entry in reading.trace.of_type(Alignment).items():
        layers[entry.layer].append((entry_name, entry))
    for layer, entries in sorted(layers.items()):
        st.markdown(f"**Layer {layer}**")
        if old is None:  # both directions of a layer side by side
            for start in range(0, len(entries), 2):
                for column, (entry_name, entry) in zip(st.columns(2), entries[start:start + 2]):
                    figure = cached_figures.alignment_figure(model, reading.premise, reading.hypothesis, entry_name, entry_name)
                    figures.show(figure, f"align_{m}_{entry_name}", f"{name}_{entry_name}", where=column,
                                 columns=2)
            continue
        for entry_name, entry in entries:  # this pair | the previous pair
            now_col, before_col = st.columns(2)
            figure = cached_figures.alignment_figure(model, reading.premise, reading.hypothesis, entry_name, entry_name)
            figures.show(figure, f"align_{m}_{entry_name}", f"{name}_{entry_name}", where=now_col, columns=2)
            if entry_name in old.trace:
                figure = alignment_heatmap(old.trace[entry_name], 0, old.premise_tokens, old.hypothesis_tokens,
                                           label=f"{entry_name} (previous pair)")
                figures.show(figure, f"align_prev_{m}_{entry_name}", f"{name}_{entry_name}_previous", where=before_col,
                             columns=2)
    for entry_name, entry in reading.trace.of_type(MemoryKeys).items():
        tokens = reading.premise_tokens if entry.tokens == "premise" else reading.hypothesis_tokens
        figures.show(memory_keys_heatmap(entry, 0, tokens, label=entry_name), f"memory_{m}_{entry_name}",
                     f"{name}_{entry_name}")


def page(models: Sequence[cache.Model]) -> None:
    """The whole explorer below its title: the pair, why it is here, predictions, glance and alignments. `models`
    need not be loaded (`frame.require_models(weights=False, declared=True)`): a pair read before is drawn from its
    readings kept on disk, without torch (the first page after a launch); the Edits tab, which runs the models on
    every edit, loads them."""
    shown = pairs.picker("explorer", models)
    premise, hypothesis, cut_notes = pairs.clean(shown)
    for note in cut_notes:
        st.warning(md(note))
    if not premise or not hypothesis:
        st.info("Type a premise and a hypothesis (both need at least one word) to see what the models make of them.")
        state.stop()
    pairs.describe(shown, cache.split_choice(models, list(cache.local_splits()))[1])
    readings = pairs.read_all(models, shown)
    if not readings:
        state.stop()
    why_here(models, shown, readings)
    tab, containers = controls.tabs(PAGE, "tab", TABS)
    with containers[TABS.index(tab)]:
        if tab == TABS[1]:
            edits.section(require_models("pair explorer"), shown, premise, hypothesis)
            return
        previous = remember(readings)
        st.subheader("Predictions")
        predictions(models, shown, readings)
        compare = probabilities(models, readings, previous)
        at_a_glance(models, shown, readings)
        alignments(models, readings, previous if compare else None)
