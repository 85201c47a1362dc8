"""Data map (dataset cartography, Swayamdipta et al. 2020): every training pair of a checkpoint at (variability,
confidence) from the training dynamics its run recorded, coloured by correctness, gold label, length, augmented or
not, or a tag; the region thresholds drawn and changeable; a box dragged over a map (or a region) lists its pairs, a
clicked point opens its pair; the hard-to-learn pairs listed as possibly mislabelled, the gold label beside each loaded
model's prediction; a second checkpoint's map beside the first. Everything the view shows is in the URL."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import streamlit as st

from nlivis.analysis.datamap import (COLOURINGS, ORDERS, REGIONS, Selection, Thresholds, augmented_groups,
                                     box_selection, compare_regions, correctness_groups, drawn_coordinates,
                                     length_groups, paper_cuts, parse_selection, region_selection, tag_groups)
from nlivis.app import cache, paths, state
from nlivis.app.cache import analyses as cached_analyses
from nlivis.app.cache import samples as cached_samples
from nlivis.app.components import controls, pair_list, point_map
from nlivis.app.components.frame import EXPLORER, caption_note, protocol_notes
from nlivis.app.text import md
from nlivis.viz.vega.datamap import BOX, CLICKED, boxed_ranges, clicked_pair, data_map_spec
from nlivis.workflows.samples import ALL_PAIRS

PAGE = "datamap"
NONE = "(none)"
TABS = ("Selected pairs", "Possibly mislabelled (hard-to-learn)", "Regions of the two maps")
DEFAULTS = Thresholds()
AMBIGUOUS_CHOICES = tuple(round(0.05 * i, 2) for i in range(1, 10))
CONFIDENCE_CHOICES = tuple(round(0.05 * i, 2) for i in range(1, 20))
DEFAULT_SELECTION = "region:hard-to-learn"


def page() -> None:
    """The page; models are loaded only for the possibly-mislabelled list (a map needs no weights)."""
    infos = {info.name: info for info in cache.scan_checkpoints().good}
    if not infos:
        st.info("No checkpoints found. Train one (Train page) or set NLIVIS_CHECKPOINTS; its run records the training "
                "dynamics a data map is drawn from.")
        state.stop()
    loaded = [name for name in cache.chosen_model_names() if name in infos]
    names = loaded + sorted(n for n in infos if n not in loaded)
    recorded = cached_analyses.with_dynamics(names)
    first_column, second_column, colour_column = st.columns([2, 2, 3])
    mark = (lambda n: n if n in recorded else f"{n} (no training dynamics)")
    first = controls.select(PAGE, "checkpoint", "Checkpoint", names, (recorded or names)[0], where=first_column,
                            format_func=mark)
    second = controls.select(PAGE, "compare", "Side by side with", [NONE] + [n for n in names if n != first], NONE,
                             where=second_column, format_func=lambda n: n if n == NONE else mark(n))
    colour = controls.radio(PAGE, "colour", "Colour by", COLOURINGS, "correctness", where=colour_column)
    thresholds = threshold_choice()
    shown = [first] + ([second] if second != NONE else [])
    maps = {}
    for name in shown:
        points, problem = cached_analyses.data_map(name, thresholds)
        if points is None:
            no_dynamics(name, infos.get(name), problem)
        else:
            maps[name] = points
    protocol_notes([infos[name].protocol for name in shown if name in infos])
    if not maps:
        state.stop()
    selection, selected_on = current_selection(first, maps)
    for name, points in maps.items():
        if any(points.augmented):
            augmented_text_offer(name)
    draw_maps(maps, colour, thresholds, selection, selected_on)
    st.caption(":material/touch_app: Drag a box over a map to list its pairs below (Selected pairs); pick a region there "
               "to list a region again. Click a point to open its pair in the Pair explorer. Hover a point for its pair "
               "id.")
    tabs = list(TABS if len(maps) == 2 else TABS[:2])
    tab, containers = controls.tabs(PAGE, "tab", tabs)
    with containers[tabs.index(tab)]:
        if tab == TABS[0]:
            selected_pairs(maps, thresholds, selection, selected_on)
        elif tab == TABS[1]:
            mislabelled(first, maps, thresholds, loaded)
        else:
            regions_compared(maps)


def threshold_choice() -> tuple[float, float, float]:
    """The region thresholds (view state: `amb`, `easy`, `hard`); an impossible combination falls back to the
    defaults with a warning."""
    section = st.expander("Region thresholds", expanded=False, key=f"{PAGE}_thresholds_open", on_change="rerun")
    choices = {"amb": ("Ambiguous: variability ≥", AMBIGUOUS_CHOICES, DEFAULTS.ambiguous_variability),
               "easy": ("Easy-to-learn: confidence ≥", CONFIDENCE_CHOICES, DEFAULTS.easy_confidence),
               "hard": ("Hard-to-learn: confidence ≤", CONFIDENCE_CHOICES, DEFAULTS.hard_confidence)}
    if section.open:
        with section:
            ambiguous, easy, hard = (controls.select(PAGE, name, label, options, default, where=column)
                                     for (name, (label, options, default)), column in zip(choices.items(), st.columns(3)))
            st.caption("The paper draws its regions by eye and selects by rank (the 33% most ambiguous, easiest, "
                       "hardest); fixed thresholds let two checkpoints' maps be compared. Defaults and their reasons: "
                       "`nlivis.analysis.datamap`; the same options as `python -m nlivis datamap`.")
    else:  # drawn when opened: a tab renders a closed section's widgets all the same
        ambiguous, easy, hard = (controls.selected(PAGE, name, options, default)
                                 for name, (_, options, default) in choices.items())
    try:
        chosen = Thresholds(ambiguous, easy, hard)
    except ValueError as problem:
        st.warning(f"{md(problem)}; using the default thresholds.")
        chosen = DEFAULTS
    st.caption(f"Regions — {md(chosen.describe())}. Confidence and variability are the mean and standard deviation of "
               "the gold label's probability over the epochs a pair was trained in, as logged by each epoch's training "
               "pass; correctness is the share of those epochs in which the prediction was right.")
    return chosen.ambiguous_variability, chosen.easy_confidence, chosen.hard_confidence


def no_dynamics(name: str, info: Any, problem: str | None) -> None:
    """Why a checkpoint has no map, and how to get one."""
    how = ("Every training run of this version of nlivis records them: retrain it on the Train page, or run `python -m "
           "nlivis train")
    if info is not None:
        how += (f" --config {info.config_name} --dataset {info.protocol} --data-dir DATA --size {info.size}"
                f" --seed {info.seed or 1} --out checkpoints/{info.name}-dynamics")
    else:
        how += " …"
    st.info(f"**{md(name)}** has no data map: {md(problem or 'no training dynamics')}. {how}` (the same config, seed and "
            "budget), then open it here or run `python -m nlivis datamap` on the new folder.")


def current_selection(first: str, maps: dict[str, Any]) -> tuple[Selection, str]:
    """(the selection the view holds — `sel` in the URL, a region by default — and the checkpoint whose map it
    was drawn on, `sel_on`)."""
    text = controls.kept(PAGE, "sel", DEFAULT_SELECTION)
    on = controls.kept(PAGE, "sel_on", "")
    try:
        selection = parse_selection(text)
    except ValueError as problem:
        st.warning(f"{md(problem)}; listing the hard-to-learn region instead.")
        selection = parse_selection(DEFAULT_SELECTION)
        state.forget(PAGE, "sel")
    if on not in maps:
        on = first if first in maps else next(iter(maps))
    return selection, on


def draw_maps(maps: dict[str, Any], colour: str, thresholds: tuple[float, float, float], selection: Selection,
              selected_on: str) -> None:
    """One map per checkpoint, side by side; a box dragged over one becomes the view's selection (and is drawn as
    an outline), a clicked point opens its pair."""
    tagging = tag_choice(maps) if colour == "tag" else None
    columns = st.columns(len(maps))
    for position, ((name, points), column) in enumerate(zip(maps.items(), columns)):
        outline = (selection.kind, selection.xs, selection.ys) if selection.kind != "region" and name == selected_on else None
        spec, note = drawn_map(name, points, colour, tagging, thresholds, outline, 620 if len(maps) == 1 else 560)
        if note:
            column.caption(note)
        key = f"datamap_{position}"
        with column:
            event = point_map.show(spec, key, f"{name}_data_map", columns=len(maps))
            cuts = paper_cuts(points)
            if cuts["ambiguous_variability"] is not None:
                st.caption(f"The paper's 33% subsets on this map begin at variability ≥ {cuts['ambiguous_variability']:.3f} "
                           f"(most ambiguous), confidence ≥ {cuts['easy_confidence']:.3f} (easiest), "
                           f"≤ {cuts['hard_confidence']:.3f} (hardest).")
        act_on_event(name, points, thresholds, key, event, list(maps))


def colour_groups(points: Any, colour: str, tagging: tuple[dict[str, frozenset[str]], str] | None
                  ) -> tuple[list[str], str | None]:
    """Per pair: its group under `colour`, and what the reader should know about it; a colouring this map cannot
    give falls back to correctness, saying why."""
    if colour == "gold label":
        return list(points.gold), None
    if colour == "augmented":
        note = None if any(points.augmented) else ("No augmented pair in this run (trained without `--augment`): every "
                                                   "point is a training pair.")
        return augmented_groups(points), note
    originals = [o or pid for o, pid in zip(points.original, points.ids)]  # an augmented pair: its original's text
    if colour == "length":
        lengths: dict[str, int] = {}
        for split in dict.fromkeys(points.splits):
            lengths.update(cached_analyses.training_lengths(split))
        if not lengths:
            return correctness_groups(points), ("The training pairs' text is not in the data folder, so their lengths "
                                                "are unknown; coloured by correctness instead.")
        known = np.array([lengths.get(pid, -1) for pid in originals])
        named = iter(length_groups(known[known >= 0]))
        return [next(named) if value >= 0 else "(text not found)" for value in known], None
    if colour == "tag" and tagging is not None:
        tags, tag = tagging
        return tag_groups(originals, tags, tag), None
    return correctness_groups(points), None


def drawn_map(name: str, points: Any, colour: str, tagging: tuple[dict[str, frozenset[str]], str] | None,
              thresholds: tuple[float, float, float], outline: tuple[str, Any, Any] | None, height: int
              ) -> tuple[dict[str, Any], str | None]:
    """(`data_map_spec` of checkpoint `name`'s map, the colouring's note), kept per map state and view (a tag
    colouring, whose tags the reader may compute meanwhile, is made every run): the same spec object at every
    rerun, so its drawing is found again by identity (`cache.figures.fingerprint`) instead of hashing ten
    thousand points, and the groups and the spec are not built again (~50 ms of a Data map run)."""
    def compute() -> tuple[dict[str, Any], str | None]:
        groups, note = colour_groups(points, colour, tagging)
        trained = int((points.epochs > 0).sum())
        title = f"{name} · {trained:,} training pairs · {points.total_epochs} epochs"
        spec = data_map_spec(*drawn_coordinates(points), groups, points.ids, thresholds, points.region_counts(),
                             title, colour_name=colour, outline=outline, height=height)
        return spec, note

    if colour == "tag":
        return compute()
    state = cached_analyses.data_map_state(name)
    drawn_outline = None if outline is None else (outline[0], tuple(outline[1]), tuple(outline[2]))
    return cache.memo("data map", (state, colour, tuple(thresholds), drawn_outline, height,
                                   str(paths.data_root()) if colour == "length" else None), compute)


def tag_choice(maps: dict[str, Any]) -> tuple[dict[str, frozenset[str]], str] | None:
    """(automatic annotation tags of the maps' training splits, the tag to colour by), when they are on disk
    (tagging every pair parses every sentence once: minutes) or the reader asks for them; else None (the maps
    are coloured by correctness, and a button computes the tags)."""
    splits = [s for s in dict.fromkeys(s for points in maps.values() for s in points.splits) if s in cache.local_splits()]
    if not splits:
        st.caption("The training pairs' text is not in the data folder, so they cannot be tagged; coloured by "
                   "correctness instead.")
        return None
    missing = [s for s in splits if not cache.tags_on_disk(s)]
    if missing:
        st.caption(f"Automatic tags of {md(', '.join(missing))} are not computed yet: every pair is parsed once (a few "
                   "minutes on two cores), then kept on disk. Coloured by correctness meanwhile.")
        if not st.button("Tag every training pair", key=f"{PAGE}_tag_all"):
            return None
    tags: dict[str, frozenset[str]] = {}
    for split in splits:
        tagged, problem = cached_samples.tagged_sample(split, ALL_PAIRS)
        if tagged is None:
            st.caption(md(problem))
            continue
        tags.update(tagged.tags)
    counts: dict[str, int] = {}
    for found in tags.values():
        for tag in found:
            counts[tag] = counts.get(tag, 0) + 1
    if not counts:
        st.caption("No training pair carries an automatic tag; coloured by correctness instead.")
        return None
    names = sorted(counts)
    tag = controls.select(PAGE, "tag", "Tag", names, max(names, key=counts.get),
                          format_func=lambda t: f"{t} ({counts[t]:,} pairs)")
    return tags, tag


def act_on_event(name: str, points: Any, thresholds: tuple[float, float, float], key: str, event: Any,
                 shown: Sequence[str]) -> None:
    """A new box → the view's selection (`sel`, `sel_on`) and the Selected pairs tab; a new click on one point →
    that pair in the Pair explorer with the page's checkpoints `shown`, its region as the list to step through."""
    try:
        selection = event["selection"]
    except (KeyError, TypeError):
        selection = {}
    clicked = clicked_pair(selection)
    try:
        ranges, problem = boxed_ranges(selection), None
    except ValueError as error:
        ranges, problem = None, error
    if not state.new_event(f"chart_{key}", {BOX: ranges, CLICKED: clicked, "problem": str(problem or "")}):
        return
    try:
        chosen = box_selection(*ranges) if ranges is not None else None
    except (TypeError, ValueError) as error:
        chosen, problem = None, error
    if problem is not None:
        st.warning(f"That selection could not be read ({md(problem)}).")
        return
    if chosen is not None:
        state.remember(PAGE, "sel", chosen.text, DEFAULT_SELECTION)
        state.remember(PAGE, "sel_on", name, "")
        state.remember(PAGE, "region", "drawn on the map", "drawn on the map")
        st.session_state[state.widget_key(PAGE, "region")] = "drawn on the map"
        st.session_state[state.widget_key(PAGE, "tab")] = TABS[0]
        state.remember(PAGE, "tab", TABS[0], TABS[0])
        st.rerun()
    if clicked is not None:
        open_point(name, points, thresholds, clicked, shown)


def open_point(name: str, points: Any, thresholds: tuple[float, float, float], clicked: str,
               shown: Sequence[str]) -> None:
    """Open the map's pair with id `clicked` (a clicked point's) in the Pair explorer with the checkpoints `shown` on
    this page: an augmented pair with its edited text once that has been made again (`augmented_text_offer`), else
    the training pair it was made from (an id not on the map opens nothing)."""
    try:
        column = points.ids.index(clicked)
    except ValueError:
        return
    pid = points.original[column] or points.ids[column]
    edited = (cached_analyses.augmented_texts(name) or {}).get(points.ids[column]) if points.original[column] else None
    if edited is not None:
        pair_ref = state.PairRef(premise=edited.premise, hypothesis=edited.hypothesis, gold=edited.label)
    else:
        split = points.splits[points.ids.index(pid)]
        row = cache.split_rows(split).get(pid)
        if row is None:
            st.warning(f"Pair {md(pid)} is not in the local copy of {md(split)}, so it cannot be opened.")
            return
        pair_ref = state.PairRef(split=split, row=row)
    ref = list_ref(name, region_selection(points.region[column]), thresholds, via="datamap")
    params = state.pair_link(pair_ref, ref)
    params[state.MODELS] = ",".join(shown)  # the map's own checkpoints, not whichever models happen to be loaded
    state.switch_to(EXPLORER, params)


def augmented_text_offer(name: str) -> None:
    """A map with augmented pairs: say how they open, and offer to make their edited text again where the candidate
    edits of its training pairs are not in the cache (the edit engine parses each training pair once: minutes)."""
    key, run = cached_analyses.augmentation_of(name)
    if run is None:
        st.caption(f"{md(name)}'s augmented pairs open as the training pair each was made from: their edited text is "
                   "made again from the run's training split, which is not in the data folder.")
        return
    if run.cached:
        remade = cached_analyses.augmented_texts(name)
        if remade is not None and (remade.differing or not remade.checked):
            st.caption(f"{md(name)}: {md(remade.note)}.")
        return
    st.caption(f"{md(name)}'s augmented pairs open as the training pair each was made from until their edited text is "
               f"made again (training dynamics keep ids and numbers, never sentences): the edit engine reads its "
               f"{len(run.train_items):,} training pairs once (spaCy's parser and WordNet; minutes), then the run's "
               "seeded draw picks the same edits.")
    if st.button("Make the augmented pairs' edited text", key=f"{PAGE}_augmented_{name}"):
        cached_analyses.make_augmented_texts(key)
        st.rerun()


def list_ref(name: str, selection: Selection, thresholds: tuple[float, float, float], *, via: str,
             compare: str | None = None, models: Sequence[str] = (), order: str | None = None) -> state.ListRef:
    """The list a pair opened from here carries (thresholds only where they differ from the defaults)."""
    defaults = (DEFAULTS.ambiguous_variability, DEFAULTS.easy_confidence, DEFAULTS.hard_confidence)
    fields = {field: f"{value:g}" for field, value, default in zip(("amb", "easy", "hard"), thresholds, defaults)
              if value != default}
    return state.ListRef.of("datamap", checkpoint=name, sel=selection.text, compare=compare,
                            models=",".join(models) or None, order=order, via=via, **fields)


def order_choice(key: str, where: Any = st) -> str:
    return controls.select(PAGE, f"{key}_order", "Order", list(ORDERS), next(iter(ORDERS)), where=where)


def selected_pairs(maps: dict[str, Any], thresholds: tuple[float, float, float], selection: Selection,
                   selected_on: str) -> None:
    """The pairs of the selection (or of a region picked here), both maps' numbers beside each."""
    left, right = st.columns([3, 2])
    drawn = selection.kind != "region"
    options = (["drawn on the map"] if drawn else []) + list(REGIONS)
    picked = controls.select(PAGE, "region", "Pairs of", options, options[0] if drawn else selection.region, where=left)
    if picked != "drawn on the map" and (selection.kind != "region" or selection.region != picked):
        state.remember(PAGE, "sel", region_selection(picked).text, DEFAULT_SELECTION)
        st.rerun()  # the maps drop the outline of the drawn selection
    order = order_choice("selected", right)
    other = next((n for n in maps if n != selected_on), None)
    st.markdown(f"**{md(selected_on)}: {md(selection.describe())}**")
    pair_list.show(PAGE, "selected_pairs", list_ref(selected_on, selection, thresholds, via="datamap", compare=other,
                                                     order=order), sortable=False, open_models=list(maps))


def mislabelled(first: str, maps: dict[str, Any], thresholds: tuple[float, float, float], loaded: Sequence[str]) -> None:
    """The hard-to-learn pairs, lowest confidence first: the gold label beside the label each loaded model (and the
    map's checkpoint) predicts now."""
    name = first if first in maps else next(iter(maps))
    predictors = list(dict.fromkeys([name, *loaded]))
    count = maps[name].region_counts().get("hard-to-learn", 0)
    st.markdown(f"**{count:,} hard-to-learn training pairs of {md(name)}** — consistently low confidence in the gold "
                "label, where the paper finds mislabelled pairs collect. Where every model predicts the same other "
                "label, read the pair: the gold label may be wrong.")
    order = order_choice("mislabelled")
    pair_list.show(PAGE, "mislabelled_pairs", list_ref(name, region_selection("hard-to-learn"), thresholds,
                                                       via="mislabelled", models=predictors, order=order), sortable=False,
                   open_models=list(dict.fromkeys([*maps, *predictors])))
    caption_note("Predictions are the checkpoints' labels now (after training), on pairs they were trained on under "
                 "the reduced protocol; a model agreeing with the gold label here has memorised it, not learnt it.")


def regions_compared(maps: dict[str, Any]) -> None:
    """Pairs per region on the first map (rows) and on the second (columns), over the pairs both were trained on."""
    (first, a), (second, b) = maps.items()
    table = compare_regions(a, b)
    shared = int(table.to_numpy().sum())
    st.markdown(f"**Rows: region on {md(first)}; columns: region on {md(second)}** ({shared:,} pairs both maps hold)")
    st.dataframe(table.rename_axis(index=first, columns=second), width="stretch")
    caption_note("Pairs hard to learn for both checkpoints are better mislabelling candidates than those one model "
                 "finds hard; a box dragged over either map lists its pairs with both maps' numbers.")
