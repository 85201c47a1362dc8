"""The lists of pairs behind the app's numbers, rebuilt from a `state.ListRef` (which fits in the URL).

The page that shows a number builds the list from the same ref that a clicked pair carries to the Pair
explorer, which rebuilds it to say where the pair came from and to step to the previous / next pair in the
same order. Kinds:
  predictions    one model's labelled predictions on a split, filtered (confusion cell, errors only, tag,
                 length, unknown words) and ordered — a confusion-matrix cell, a tag's or a Table 7 cell's
                 pairs, the list of errors;
  disagreements  pairs on which checkpoints of one family give different labels (Ablations);
  projection     the points of one colour in a model's projection of a split sample;
  challenge      one category of a challenge file, by one model (typed pairs with their gold label); with
                 `versus`, only the pairs one of the two checkpoints gets right (the before → after report);
  datamap        the training pairs in a region, box or lasso of a checkpoint's data map, with the gold
                 label beside the listed checkpoints' predictions (the "possibly mislabelled" list).
  <analysis>     the rows of a registered analysis's run kept in this server (`analysis_list`), e.g. `probes`:
                 one model's failing cases of one behavioural test (typed pairs; the gold label where the
                 case's expectation is a label).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from nlivis.analysis.breakdown import disagreements
from nlivis.analysis.challenge import pairs_in_group
from nlivis.analysis.datamap import Thresholds, parse_selection
from nlivis.analysis.pair_lists import SORTS, PairFilter, filter_pairs, position_of, prediction_rows, sort_pairs
from nlivis.app import cache, paths
from nlivis.app.cache import analyses as cached_analyses
from nlivis.app.cache import challenge as cached_challenge
from nlivis.app.cache import samples as cached_samples
from nlivis.app.state import ListRef, PairRef, url_row
from nlivis.data.text import decimal_number, whole_number
from nlivis.workflows.datamap import ListingSources, datamap_listing
from nlivis.workflows.protocol import ANALYSES, ListRow
from nlivis.workflows.samples import ALL_PAIRS

TAGS_GOLD = "gold"
TAGS_ALL = "automatic:all"
"""Tag sources a list names: the published gold tags, automatic tags of every pair, or `automatic:<N>` of a
fixed random sample of N pairs (seed 0)."""


@dataclass
class PairList:
    """A resolved list: its pairs (a `split`/`row` column for split pairs, or premise / hypothesis / gold for
    typed ones), what it is, and why it could not be built (then `frame` is empty)."""

    frame: pd.DataFrame
    description: str
    split: str | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def split_rows(self) -> bool:
        """Whether the pairs are split rows (one split for the list, or a `split` column per pair)."""
        return self.split is not None or {"split", "row"} <= set(self.frame.columns)

    def opens(self, position: int) -> bool:
        """Whether the pair at `position` can be opened: a split row in the local copy of its split, or a line with
        its own text (a typed pair; in a list of split rows, e.g. an augmented pair with its edited text)."""
        row = self.frame.iloc[position]
        return not self.split_rows or not pd.isna(row.get("row")) or bool(row.get("premise"))

    def pair_at(self, position: int) -> PairRef:
        row = self.frame.iloc[position]
        if self.split is not None:
            return PairRef(split=self.split, row=int(row["row"]))
        if self.split_rows and not pd.isna(row["row"]):
            return PairRef(split=str(row["split"]), row=int(row["row"]))
        gold = row.get("gold")
        return PairRef(premise=str(row["premise"]), hypothesis=str(row["hypothesis"]),
                       gold=None if pd.isna(gold) else str(gold))

    def position_of(self, ref: PairRef) -> int | None:
        if self.frame.empty:
            return None
        if ref.is_row and self.split == ref.split:
            return position_of(self.frame, row=ref.row)
        if ref.is_row and self.split is None and self.split_rows:
            found = self.frame.index[(self.frame["split"] == ref.split) & (self.frame["row"] == ref.row)]
            return int(found[0]) if len(found) else None
        if not ref.is_row and "premise" in self.frame:
            return position_of(self.frame, premise=ref.premise, hypothesis=ref.hypothesis)
        return None


def model_by_name(name: str) -> tuple[cache.Model | None, str | None]:
    """The checkpoint `name` loaded (it need not be among the selected models)."""
    folder = paths.find_checkpoint_folder(name)
    if folder is None:
        return None, f"no checkpoint folder named {name}"
    loaded, error = cache.load_model(folder)
    if error:
        return None, error
    return cache.Model(name, str(folder), loaded, ""), None


def checkpoint_predictions_by_name(name: str, split: str) -> tuple[Path | None, list, str | None]:
    """(folder, predictions, None) for the checkpoint `name` on `split` (its weights are not loaded), or
    (folder or None, [], why not): the one lookup every list of a named checkpoint's predictions starts with."""
    folder = paths.find_checkpoint_folder(name)
    if folder is None:
        return None, [], f"no checkpoint folder named {name}"
    predictions, error = cache.checkpoint_predictions(folder, split)
    return folder, predictions, error


def tags_for(split: str, source: str | None) -> tuple[dict[str, frozenset[str]] | None, str | None, dict[str, str]]:
    """(pair id → tags from `source` for split `split`, None) — None tags when no source is named — and the
    tags the rules could not decide (tag → why)."""
    if not source:
        return None, None, {}
    if source == TAGS_GOLD:
        gold, _, error = cached_samples.gold_tags(split)
        rows = cache.split_rows(split)
        return {pid: tags for pid, tags in gold.items() if pid in rows}, error, {}
    if source.startswith("automatic:"):
        size_text = source.split(":", 1)[1]
        size = ALL_PAIRS if size_text == "all" else url_row(size_text)
        if size is None:
            return None, f"tag source {source!r} is not automatic:all or automatic:<pairs>", {}
        tagged, error = cached_samples.tagged_sample(split, size)
        if tagged is None:
            return None, error, {}
        gold, _, _ = cached_samples.gold_tags(split)
        return {pid: tags for pid, tags in tagged.tags.items() if pid not in gold}, None, tagged.unavailable
    return None, f"tag source {source!r} is not gold, automatic:all or automatic:<pairs>", {}


def pair_filter(ref: ListRef) -> PairFilter:
    def number(name: str) -> int | None:
        try:
            return whole_number(ref.get(name) or "")
        except ValueError:
            return None

    return PairFilter(gold=ref.get("gold"), predicted=ref.get("predicted"), wrong_only=ref.get("wrong") == "1",
                      tag=ref.get("tag"), min_length=number("min_length"), max_length=number("max_length"),
                      unknown=ref.get("unknown", "any") or "any")


def predictions_list(ref: ListRef) -> PairList:
    name, split = ref.get("model", ""), ref.get("split", "")
    order = ref.get("order", "row")
    keep = pair_filter(ref)
    described = f"{name} on {split}" + (f" · {keep.describe()}" if keep.describe() else "")
    if ref.get("tags") and keep.tag:
        described += f" ({'gold' if ref.get('tags') == TAGS_GOLD else 'automatic'} tags)"
    folder, predictions, error = checkpoint_predictions_by_name(name, split)
    if error:
        return PairList(pd.DataFrame(), described, split, error)
    tags, tag_error, unavailable = tags_for(split, ref.get("tags"))
    notes = [f"{tag} (automatic): {why}" for tag, why in unavailable.items()]
    model, _ = model_by_name(name)
    counts = cached_samples.token_counts(model, split) if model is not None else None
    needs_counts = (keep.min_length is not None or keep.max_length is not None or keep.unknown != "any"
                    or SORTS.get(order, ("row",))[0] in ("length", "unknown"))
    if counts is None and needs_counts:
        notes.append("lengths and unknown words need the split's spaCy analyses, which are not cached here yet")
    key = (str(folder), cache.predictions_stamp(folder, split), split, str(paths.data_root()), ref.get("tags"), counts is None)
    frame = cache.memo("prediction rows", key, lambda: prediction_rows(predictions, cache.split_rows(split),
                                                                       cache.split_pairs(split)[0] or None, tags, counts))
    frame = sort_pairs(filter_pairs(frame, keep), order if order in SORTS else "row")
    return PairList(frame, described, split, tag_error, notes)


def disagreements_list(ref: ListRef) -> PairList:
    split = ref.get("split", "")
    members = [m for m in (ref.get("members") or "").split(",") if m]
    described = f"pairs of {split} on which {', '.join(members)} disagree"
    found: dict[str, list] = {}
    labels = None
    for name in members:
        _, predictions, error = checkpoint_predictions_by_name(name, split)
        if error:
            return PairList(pd.DataFrame(), described, split, error)
        found[name] = predictions
        if labels is None:
            loaded = cache.variant_records()[0]
            labels = next((r.labels for r in loaded if r.name == name and r.labels), None)
    if len(found) < 2:
        return PairList(pd.DataFrame(), described, split, "a disagreement needs at least two checkpoints")
    key = (tuple((name, cache.predictions_stamp(paths.find_checkpoint_folder(name), split)) for name in members), split,
           str(paths.data_root()))
    # the whole table, rows and texts included, once per state of the predictions and the data: rebuilding it on
    # every rerun of the Ablations page was a third of that page's warm script (bench/page_script_time.py)
    ranked = cache.memo("disagreements", key, lambda: with_pair_texts(
        disagreements(found, labels) if labels else disagreements(found), split))
    return PairList(ranked.copy(), described, split)


def with_pair_texts(ranked: pd.DataFrame, split: str) -> pd.DataFrame:
    """`ranked` (a table of pair ids) with each pair's row in `split` first, its premise and hypothesis after its
    id (empty where the split has no such pair), renumbered from 0."""
    rows = cache.split_rows(split)
    ranked = ranked.copy()
    ranked.insert(0, "row", pd.array([rows.get(pid) for pid in ranked["id"]], dtype="Int64"))
    pairs, _ = cache.split_pairs(split)
    if pairs:
        ranked.insert(2, "premise", [pairs[r].premise if not pd.isna(r) else "" for r in ranked["row"]])
        ranked.insert(3, "hypothesis", [pairs[r].hypothesis if not pd.isna(r) else "" for r in ranked["row"]])
    return ranked.reset_index(drop=True)


def projection_list(ref: ListRef) -> PairList:
    name, split = ref.get("model", ""), ref.get("split", "")
    colour, value = ref.get("colour", "correctness"), ref.get("value", "")
    described = f"{name}'s projection of {split}: points coloured {colour} = {value}"
    model, error = model_by_name(name)
    if model is None:
        return PairList(pd.DataFrame(), described, split, error)
    frame, problem = cached_samples.projection_frame(model, split, url_row(ref.get("size")) or 1000,
                                                     ref.get("method", "umap") or "umap", colour, ref.get("tag"),
                                                     compute=False)
    if frame is None:
        return PairList(pd.DataFrame(), described, split, problem)
    frame = frame[frame["colour"] == value].sort_values("row", kind="stable")
    return PairList(frame.reset_index(drop=True), described, split)


def challenge_list(ref: ListRef) -> PairList:
    files = [Path(part) for part in (ref.get("files") or "").split(";") if part]
    name, field_name, group = ref.get("model", ""), ref.get("field", ""), ref.get("group", "")
    described = f"{name} on {', '.join(f.name for f in files)}: {field_name} = {group}" + (
        " · errors only" if ref.get("wrong") == "1" else "")
    challenge, error = cached_challenge.read_challenge(files, ref.get("scheme", "3way"))
    if challenge is None:
        return PairList(pd.DataFrame(), described, None, error)
    model, error = model_by_name(name)
    if model is None:
        return PairList(pd.DataFrame(), described, None, error)
    predictions, _, problem = cached_challenge.challenge_predictions(model, challenge)
    if problem or not predictions:
        return PairList(pd.DataFrame(), described, None, problem or f"{name} was not evaluated on this file yet")
    try:
        groups = challenge.groups(field_name)
    except ValueError as problem:
        return PairList(pd.DataFrame(), described, None, str(problem))
    frame = pairs_in_group(predictions, groups, group)
    by_id = {pair.id: pair for pair in challenge.pairs}
    shown = pd.DataFrame({
        "id": frame["id"], "premise": frame["id"].map(lambda pid: by_id[pid].premise),
        "hypothesis": frame["id"].map(lambda pid: by_id[pid].hypothesis), "gold": frame["gold"],
        "predicted": frame["predicted"], "correct": frame["correct"], "confidence": frame["confidence"].round(3)})
    if ref.get("wrong") == "1":
        shown = shown[~shown["correct"].astype(bool)]
    if ref.get("versus"):
        shown, problem = against(shown, challenge, ref.get("versus", ""))
        if problem:
            return PairList(pd.DataFrame(), described, None, problem)
        described = (f"{', '.join(f.name for f in files)}, {field_name} = {group}: the pairs only one of {name} and "
                     f"{ref.get('versus')} gets right")
    return PairList(shown.reset_index(drop=True), described, None)


def against(shown: pd.DataFrame, challenge, name: str) -> tuple[pd.DataFrame, str | None]:
    """The listed pairs that checkpoint `name` and the listed model do not both get right or both wrong (the pairs
    McNemar's test weighs), with what `name` predicted beside; or (empty, why not)."""
    model, error = model_by_name(name)
    if model is None:
        return pd.DataFrame(), error
    predictions, _, problem = cached_challenge.challenge_predictions(model, challenge)
    if problem or not predictions:
        return pd.DataFrame(), problem or f"{name} was not evaluated on this file yet"
    predicted = {p.id: p.predicted for p in predictions}
    shown = shown.copy()
    shown.insert(shown.columns.get_loc("predicted"), f"{name} predicted", shown["id"].map(predicted))
    return shown[(shown[f"{name} predicted"] == shown["gold"]) != shown["correct"].astype(bool)], None


def datamap_thresholds(ref: ListRef) -> tuple[float, float, float]:
    defaults = Thresholds()

    def number(name: str, default: float) -> float:
        try:
            return decimal_number(ref.get(name) or "")
        except ValueError:
            return default

    return (number("amb", defaults.ambiguous_variability), number("easy", defaults.easy_confidence),
            number("hard", defaults.hard_confidence))


def datamap_list(ref: ListRef) -> PairList:
    """The training pairs of one checkpoint's data map that a selection holds (`sel`: region:NAME, box:…,
    lasso:…), in `order`, with premise and hypothesis read from the training split by id; `compare` adds a
    second checkpoint's confidence and region, `models` the label each listed checkpoint predicts."""
    name = ref.get("checkpoint", "")
    compare = ref.get("compare")
    predictors = [m for m in (ref.get("models") or "").split(",") if m]
    # kept per view and per state of what it reads (the maps, the predicting checkpoints, the data, the augmented
    # pairs' text once made): listing ~1,000 pairs with their text took the Data map ~0.1 s of every run
    inputs = (ref.fields, cached_analyses.data_map_state(name), compare and cached_analyses.data_map_state(compare),
              tuple(cached_analyses.checkpoint_state(m) for m in predictors), str(paths.data_root()),
              cached_analyses.augmented_texts(name) is not None)
    return cache.memo("data map list", inputs, lambda: _datamap_list(ref, name, compare, predictors))


def _datamap_list(ref: ListRef, name: str, compare: str | None, predictors: list[str]) -> PairList:
    selection = parse_selection(ref.get("sel", "region:hard-to-learn"))
    described = f"{name}'s data map: {selection.describe()}"
    points, problem = cached_analyses.data_map(name, datamap_thresholds(ref))
    if points is None:
        return PairList(pd.DataFrame(), described, None, problem)
    compared = ((compare, *cached_analyses.data_map(compare, datamap_thresholds(ref))) if compare and compare != name
                else None)
    sources = ListingSources(cache.split_rows, lambda split: cache.split_pairs(split)[0],
                             cached_analyses.training_predictions)
    found = datamap_listing(points, selection, ref.get("order"), sources, compared, predictors,
                            cached_analyses.augmented_texts(name) if any(points.augmented) else None)
    return PairList(found.frame, described, None, None, found.notes)


def rows_frame(rows: Sequence[ListRow], score: str) -> pd.DataFrame:
    """An analysis's rows as a list's table: `id`, `split` and `row` where the rows have them, the columns as the
    analysis names them, and its number under `score` unless a column already shows it."""
    frame = pd.DataFrame([dict(row.columns) for row in rows])
    if any(row.split is not None for row in rows):
        frame.insert(0, "row", pd.array([row.row for row in rows], dtype="Int64"))
        frame.insert(0, "split", [row.split for row in rows])
    if any(row.pair_id for row in rows):
        frame.insert(0, "id", [row.pair_id for row in rows])
    if rows and score not in frame:
        frame[score] = [row.score for row in rows]
    return frame


def analysis_list(ref: ListRef) -> PairList:
    """The rows of a registered analysis's run (`protocol.AnalysisSpec.rows`) on the checkpoints `models` (for an
    analysis of a split: on the sample of `size` pairs of `split`), run in this server with the options whose
    digest is `run`; the other fields select the rows (e.g. a probe's `test` and `model`). One component for
    every analysis that gives a pair list."""
    spec = ANALYSES[ref.kind]
    names = [name for name in (ref.get("models") or "").split(",") if name]
    selection = dict(ref.fields)
    described = spec.describe(selection) if spec.describe is not None else f"{spec.name} of {', '.join(names)}"
    if spec.rows is None:
        return PairList(pd.DataFrame(), described, None, f"{spec.name} gives no pair list")
    models = []
    for member in names:
        model, error = model_by_name(member)
        if model is None:
            return PairList(pd.DataFrame(), described, None, error)
        models.append(model)
    size = url_row(ref.get("size") or "")
    sample = (ref.get("split", ""), size) if ref.get("split") and size is not None else None
    result = cached_analyses.stored_run(spec.name, models, ref.get("run") or "", sample) if models else None
    if result is None:
        return PairList(pd.DataFrame(), described, None, f"the {spec.name} run this list comes from is not in this "
                        f"server (yet): run it on {spec.where or 'its page'}")
    try:
        return PairList(rows_frame(spec.rows(result, selection), spec.score), described, None)
    except ValueError as problem:  # the selection names what the run does not hold
        return PairList(pd.DataFrame(), described, None, str(problem))


PROVIDERS = {"predictions": predictions_list, "disagreements": disagreements_list, "projection": projection_list,
             "challenge": challenge_list, "datamap": datamap_list}
"""The lists of kinds that are not a registered analysis's rows (those go to `analysis_list`)."""

VIA = {"cell": "a confusion-matrix cell", "tag": "a tag's accuracy", "table7": "a Table 7 cell",
       "errors": "the list of errors", "point": "a projection point", "disagreements": "the Ablations disagreements",
       "category": "a challenge-set category", "datamap": "a data-map selection",
       "mislabelled": "the possibly mislabelled training pairs", "probe": "a behavioural test's failing cases",
       "report": "the before → after report"}
"""What a list's `via` field says the user clicked."""


def resolve(ref: ListRef) -> PairList:
    """The list `ref` names, rebuilt (cached reads), or an empty one saying why it cannot be."""
    provider = PROVIDERS.get(ref.kind) or (analysis_list if ref.kind in ANALYSES else None)
    if provider is None:
        return PairList(pd.DataFrame(), f"a list of kind {ref.kind}", None, f"unknown list kind {ref.kind!r}")
    try:
        return provider(ref)
    except (OSError, ValueError, KeyError) as error:
        return PairList(pd.DataFrame(), f"a list of kind {ref.kind}", None, str(error))
