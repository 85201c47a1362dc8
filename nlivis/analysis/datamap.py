"""Data maps (dataset cartography: Swayamdipta et al., "Dataset Cartography: Mapping and Diagnosing
Datasets with Training Dynamics", EMNLP 2020): where each training pair sits by how confidently and how
consistently the model learned it, from the training dynamics a checkpoint recorded (`store.dynamics`).

Per pair, over the E epochs it was trained in (every epoch for a training-split pair; for a mix-in pair the
epochs it was drawn in; the last epoch only if the run reached the pair in it), with p_e the probability
of its gold label in epoch e's training pass:
- confidence  = the mean of p_e;
- variability = the population standard deviation of p_e (numpy's `std`, ddof 0, as allenai/cartography
  computes it);
- correctness = the share of those epochs in which the prediction was the gold label (the paper counts
  epochs; a share keeps pairs seen in different numbers of epochs comparable).

Regions, for counts and listings (one region per pair, checked in this order; every threshold changeable):
- ambiguous:      variability ≥ `ambiguous_variability` (default 0.2): the model's belief in the gold label
                  moves by ±0.2 or more from epoch to epoch;
- easy-to-learn:  confidence ≥ `easy_confidence` (default 0.75), with the variability below that;
- hard-to-learn:  confidence ≤ `hard_confidence` (default 0.25): consistently well under a uniform guess
                  among three labels (0.33), i.e. the model keeps preferring another label — where the
                  paper finds mislabelled pairs collect;
- between:        the rest.
The paper itself draws the regions by eye on the map and selects by rank — the 33% of pairs with the highest
variability ("ambiguous"), the highest confidence ("easy"), the lowest confidence ("hard"), its Table 1 and
allenai/cartography's `train_dy_filtering.py`. Rank-based subsets always hold a third of the pairs, so they
cannot say whether one model finds more pairs hard than another; fixed thresholds can. `paper_cuts` gives
the values at which this map's 33% subsets begin, so the paper's subsets are one threshold choice away.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from nlivis.data.text import decimal_number
from nlivis.store.dynamics import TrainingDynamics

if TYPE_CHECKING:
    import pandas as pd

REGIONS = ("easy-to-learn", "ambiguous", "hard-to-learn", "between")
NOT_TRAINED = "not trained on"
"""The region of a pair with no records (a mix-in pair never drawn): it has no place on the map."""
PAPER_SHARE = 0.33
"""The paper's subsets are the top / bottom 33% (its code: 0.3319 of the pairs)."""
MAX_VARIABILITY = 0.5
"""The largest population standard deviation values in [0, 1] can have."""


@dataclass(frozen=True)
class Thresholds:
    """Where the regions begin; see the module docstring for the defaults' reasons."""

    ambiguous_variability: float = 0.2
    easy_confidence: float = 0.75
    hard_confidence: float = 0.25

    def __post_init__(self) -> None:
        if not 0.0 <= self.ambiguous_variability <= MAX_VARIABILITY:
            raise ValueError(f"ambiguous variability {self.ambiguous_variability}: give a value in 0 … {MAX_VARIABILITY} "
                             "(a standard deviation of probabilities)")
        for name, value in (("easy confidence", self.easy_confidence), ("hard confidence", self.hard_confidence)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} {value}: give a probability in 0 … 1")
        if self.hard_confidence >= self.easy_confidence:
            raise ValueError(f"hard confidence {self.hard_confidence} must lie below easy confidence {self.easy_confidence}")

    def describe(self) -> str:
        return (f"ambiguous: variability ≥ {self.ambiguous_variability:g}; easy-to-learn: confidence ≥ "
                f"{self.easy_confidence:g}; hard-to-learn: confidence ≤ {self.hard_confidence:g} (easy and hard: "
                "variability below the ambiguous threshold)")


@dataclass
class DataMap:
    """One entry per training pair (the checkpoint's dynamics columns, in order)."""

    ids: list[str]
    splits: list[str]
    gold: list[str]
    confidence: np.ndarray
    """float64 [pairs]; NaN for a pair never trained on."""
    variability: np.ndarray
    correctness: np.ndarray
    epochs: np.ndarray
    """int [pairs]: how many epochs the pair was trained in."""
    region: list[str]
    thresholds: Thresholds
    total_epochs: int
    augmented: list[str | None] = field(default_factory=list)
    """Per pair: its augmentation kind when it is an augmented pair (`train --augment`), else None."""
    original: list[str | None] = field(default_factory=list)
    """Per pair: the id of the training pair an augmented pair was made from, else None."""

    def __post_init__(self) -> None:
        self.augmented = self.augmented or [None] * len(self.ids)
        self.original = self.original or [None] * len(self.ids)

    def is_augmented(self) -> np.ndarray:
        """bool [pairs]: which pairs are augmented (the Data map's "augmented or not" colouring)."""
        return np.array([kind is not None for kind in self.augmented], dtype=bool)

    def rows(self) -> list[dict]:
        """Per pair: id, split, gold, confidence, variability, correctness, epochs, region, augmented (the
        kind or None) and original (the id it was made from, or None); numbers rounded to 4 decimals, None
        for a pair never trained on."""
        def number(value: float) -> float | None:
            return None if np.isnan(value) else round(float(value), 4)

        return [{"id": self.ids[i], "split": self.splits[i], "gold": self.gold[i],
                 "confidence": number(self.confidence[i]), "variability": number(self.variability[i]),
                 "correctness": number(self.correctness[i]), "epochs": int(self.epochs[i]), "region": self.region[i],
                 "augmented": self.augmented[i], "original": self.original[i]}
                for i in range(len(self.ids))]

    def region_counts_by_origin(self) -> dict[str, dict[str, int]]:
        """Region counts of the training pairs and of the augmented pairs apart (empty without augmentation)."""
        flags = self.is_augmented()
        if not flags.any():
            return {}
        return {origin: dict(Counter(r for r, f in zip(self.region, flags) if f == wanted))
                for origin, wanted in (("training pairs", False), ("augmented pairs", True))}

    def region_counts(self) -> dict[str, int]:
        """Pairs per region (REGIONS order, then pairs never trained on when there are any)."""
        counted = Counter(self.region)  # counted in C: a Python loop over ten thousand pairs took ~5 ms a run
        return {**{name: counted.pop(name, 0) for name in REGIONS}, **counted}


def data_map(dynamics: TrainingDynamics, thresholds: Thresholds | None = None) -> DataMap:
    """Confidence, variability and correctness of every training pair, and its region."""
    thresholds = thresholds or Thresholds()
    probabilities = dynamics.probabilities()  # [E, N], NaN where not trained on
    seen = dynamics.seen()
    epochs = seen.sum(axis=0)
    trained = epochs > 0
    confidence = np.full(dynamics.pairs, np.nan)
    variability = np.full(dynamics.pairs, np.nan)
    correctness = np.full(dynamics.pairs, np.nan)
    if trained.any():
        values = probabilities[:, trained]
        confidence[trained] = np.nanmean(values, axis=0)
        variability[trained] = np.nanstd(values, axis=0)
        correctness[trained] = dynamics.correct()[:, trained].sum(axis=0) / epochs[trained]
    region = [_region(c, v, t, thresholds) for c, v, t in zip(confidence, variability, trained)]
    splits = [""] * dynamics.pairs
    for source in dynamics.sources:
        splits[source["start"]:source["start"] + source["count"]] = [source["split"]] * source["count"]
    originals = dynamics.augmented_originals()
    return DataMap(ids=list(dynamics.ids), splits=splits, gold=[dynamics.labels[g] for g in dynamics.gold],
                   confidence=confidence, variability=variability, correctness=correctness, epochs=epochs,
                   region=region, thresholds=thresholds, total_epochs=dynamics.epochs,
                   augmented=dynamics.augmented_kinds(),
                   original=[None if column is None else dynamics.ids[column] for column in originals])


def _region(confidence: float, variability: float, trained: bool, thresholds: Thresholds) -> str:
    if not trained:
        return NOT_TRAINED
    if variability >= thresholds.ambiguous_variability:
        return "ambiguous"
    if confidence >= thresholds.easy_confidence:
        return "easy-to-learn"
    if confidence <= thresholds.hard_confidence:
        return "hard-to-learn"
    return "between"


def paper_cuts(points: DataMap, share: float = PAPER_SHARE) -> dict[str, float | None]:
    """Where this map's rank-based subsets of the paper begin: the variability above which the `share` most
    ambiguous pairs lie, and the confidence above (below) which the `share` easiest (hardest) pairs lie."""
    trained = points.epochs > 0
    if not trained.any():
        return {"share": share, "ambiguous_variability": None, "easy_confidence": None, "hard_confidence": None}
    confidence, variability = points.confidence[trained], points.variability[trained]
    return {"share": share,
            "ambiguous_variability": round(float(np.quantile(variability, 1 - share)), 4),
            "easy_confidence": round(float(np.quantile(confidence, 1 - share)), 4),
            "hard_confidence": round(float(np.quantile(confidence, share)), 4)}


def hardest(points: DataMap, limit: int) -> list[int]:
    """Indices of the hard-to-learn pairs, lowest confidence first (the "possibly mislabelled" list)."""
    hard = [i for i, name in enumerate(points.region) if name == "hard-to-learn"]
    return sorted(hard, key=lambda i: (points.confidence[i], points.ids[i]))[:max(0, limit)]


# ---------------------------------------------------------------- what the Data map page shows and lists

SELECTION_KINDS = ("region", "box", "lasso")
MAX_LASSO_VERTICES = 64
"""A lasso is kept (in the URL, in the list a pair carries) with at most this many vertices."""
COORDINATE_DIGITS = 4
"""Box and lasso coordinates are rounded to this many decimals (1e-4: far below a marker's size)."""


@dataclass(frozen=True)
class Selection:
    """Pairs picked on a map: a region by name, a box of variability × confidence (inclusive bounds), or a
    lasso polygon (even-odd rule). `text` is how the URL carries it; `parse_selection` reads it back."""

    kind: str
    region: str = ""
    xs: tuple[float, ...] = ()
    ys: tuple[float, ...] = ()

    @property
    def text(self) -> str:
        if self.kind == "region":
            return f"region:{self.region}"
        if self.kind == "box":
            return "box:" + ",".join(f"{v:g}" for v in (*self.xs, *self.ys))
        return "lasso:" + ";".join(f"{x:g},{y:g}" for x, y in zip(self.xs, self.ys))

    def describe(self) -> str:
        if self.kind == "region":
            return f"the {self.region} region"
        if self.kind == "box":
            return (f"the box variability {self.xs[0]:.3f}–{self.xs[1]:.3f} × confidence "
                    f"{self.ys[0]:.3f}–{self.ys[1]:.3f}")
        return f"the lasso of {len(self.xs)} vertices"


def region_selection(name: str) -> Selection:
    if name not in (*REGIONS, NOT_TRAINED):
        raise ValueError(f"region {name!r} is not one of {', '.join(REGIONS)}")
    return Selection("region", region=name)


def box_selection(xs: tuple[float, float] | list[float], ys: tuple[float, float] | list[float]) -> Selection:
    """A box from two corners in any order (rounded to COORDINATE_DIGITS)."""
    if len(xs) != 2 or len(ys) != 2:
        raise ValueError("a box needs two x and two y values")
    x0, x1 = sorted(round(float(v), COORDINATE_DIGITS) for v in xs)
    y0, y1 = sorted(round(float(v), COORDINATE_DIGITS) for v in ys)
    if not all(np.isfinite([x0, x1, y0, y1])):
        raise ValueError("a box's corners must be finite numbers")
    return Selection("box", xs=(x0, x1), ys=(y0, y1))


def lasso_selection(xs: list[float], ys: list[float], max_vertices: int = MAX_LASSO_VERTICES) -> Selection:
    """A lasso polygon, thinned to at most `max_vertices` evenly spaced vertices (a drawn lasso has hundreds;
    the URL keeps the thinned one, and the pairs listed are those inside it)."""
    if len(xs) != len(ys) or len(xs) < 3:
        raise ValueError("a lasso needs at least three vertices, each with x and y")
    points = np.column_stack([np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)])
    if not np.isfinite(points).all():
        raise ValueError("a lasso's vertices must be finite numbers")
    if len(points) > max_vertices:
        points = points[np.linspace(0, len(points) - 1, max_vertices).round().astype(int)]
    points = points.round(COORDINATE_DIGITS)
    return Selection("lasso", xs=tuple(float(v) for v in points[:, 0]), ys=tuple(float(v) for v in points[:, 1]))


def parse_selection(text: str) -> Selection:
    """`Selection.text` read back; ValueError saying what is wrong with any other text."""
    kind, _, body = (text or "").partition(":")
    try:
        if kind == "region":
            return region_selection(body)
        if kind == "box":
            values = [decimal_number(v) for v in body.split(",")]
            if len(values) != 4:
                raise ValueError("a box is box:x0,x1,y0,y1")
            return box_selection(values[:2], values[2:])
        if kind == "lasso":
            vertices = [tuple(decimal_number(v) for v in part.split(",")) for part in body.split(";") if part]
            if any(len(v) != 2 for v in vertices):
                raise ValueError("a lasso is lasso:x,y;x,y;…")
            return lasso_selection([v[0] for v in vertices], [v[1] for v in vertices])
    except ValueError as error:
        raise ValueError(f"selection {text!r}: {error}") from error
    raise ValueError(f"selection {text!r} is not region:NAME, box:x0,x1,y0,y1 or lasso:x,y;x,y;…")


def inside_polygon(x: np.ndarray, y: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """bool per point: inside the closed polygon (xs, ys) by the even-odd rule (plotly's lasso uses it too)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    inside = np.zeros(x.shape, dtype=bool)
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    for i in range(len(xs)):
        x0, y0, x1, y1 = xs[i - 1], ys[i - 1], xs[i], ys[i]
        crosses = (y0 > y) != (y1 > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
        inside ^= crosses & (x < at)
    return inside


def drawn_coordinates(points: DataMap) -> tuple[np.ndarray, np.ndarray]:
    """(variability, confidence) as the map draws them and a drawn selection tests them: rounded to
    COORDINATE_DIGITS (far below a pixel; a selection's corners are rounded so too), so that a point drawn on a
    box's edge is in the box; NaN where a pair was not trained on."""
    return points.variability.round(COORDINATE_DIGITS), points.confidence.round(COORDINATE_DIGITS)


def members(points: DataMap, selection: Selection) -> np.ndarray:
    """Indices (column order) of the trained pairs the selection holds (a box or lasso: by `drawn_coordinates`)."""
    trained = points.epochs > 0
    if selection.kind == "region":
        return np.flatnonzero(np.array([r == selection.region for r in points.region], dtype=bool))
    x, y = drawn_coordinates(points)
    if selection.kind == "box":
        (x0, x1), (y0, y1) = selection.xs, selection.ys
        return np.flatnonzero(trained & (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1))
    return np.flatnonzero(trained & inside_polygon(np.nan_to_num(x), np.nan_to_num(y), np.array(selection.xs),
                                                   np.array(selection.ys)))


COLOURINGS = ("correctness", "gold label", "length", "augmented", "tag")
"""What the map's points can be coloured by."""


def correctness_groups(points: DataMap) -> list[str]:
    """Per pair: how many of its epochs it was right in, as "k/E right" (the paper's colouring), or NOT_TRAINED."""
    epochs = np.asarray(points.epochs, dtype=int)
    right = np.rint(np.nan_to_num(np.asarray(points.correctness, dtype=float) * epochs)).astype(int)
    # a map holds ten thousand pairs and a few (k, E) groups: each group's name made once, every rerun of the page
    kinds, which = np.unique(np.stack([right, epochs]), axis=1, return_inverse=True)
    names = [NOT_TRAINED if e == 0 else f"{k}/{e} right" for k, e in kinds.T.tolist()]
    return [names[i] for i in np.ravel(which).tolist()]


def length_groups(lengths: np.ndarray | list[int], groups: int = 4) -> list[str]:
    """Per pair: its quantile group of lengths (premise + hypothesis tokens) as a token range, e.g. "17–20
    tokens"; groups with the same edges are merged."""
    lengths = np.asarray(lengths, dtype=int)
    if lengths.size == 0:
        return []
    edges = np.unique(np.quantile(lengths, np.linspace(0, 1, groups + 1)).round().astype(int))
    if len(edges) == 1:
        return [f"{edges[0]} tokens"] * len(lengths)
    # group 0 holds [edges[0], edges[1]], group i > 0 holds (edges[i], edges[i + 1]]
    which = np.clip(np.searchsorted(edges, lengths, side="left") - 1, 0, len(edges) - 2)
    starts = [edges[0]] + [edges[i] + 1 for i in range(1, len(edges) - 1)]
    names = [f"{start}–{end} tokens" if start < end else f"{end} tokens" for start, end in zip(starts, edges[1:])]
    return [names[i] for i in which]


def augmented_groups(points: DataMap) -> list[str]:
    """Per pair: "training pair" or "augmented: <kind>"."""
    return ["training pair" if kind is None else f"augmented: {kind}" for kind in points.augmented]


def tag_groups(ids: list[str], tags: dict[str, frozenset[str]], tag: str) -> list[str]:
    """Per pair: the tag, "other" when the pair has tags but not this one, "(not tagged)" when it has none."""
    return [tag if tag in tags.get(pid, ()) else "other" if pid in tags else "(not tagged)" for pid in ids]


ORDERS = {"lowest confidence first": ("confidence", True), "highest variability first": ("variability", False),
          "least often right first": ("correctness", True), "row": ("row", True)}
"""How a list of map pairs can be read: name → (column, ascending). Ties keep the column order of the map."""


def listing(points: DataMap, indices: np.ndarray | list[int], order: str = "lowest confidence first") -> pd.DataFrame:
    """The pairs at `indices` as a table (position = column of the map; id, split, gold, confidence,
    variability, correctness, epochs, region, augmented, original), in `order` (a key of ORDERS)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}, got {order!r}")
    import pandas as pd  # only for the tables: `python -m nlivis --help` builds the data map's options

    indices = np.asarray(indices, dtype=int)
    frame = pd.DataFrame({
        "column": indices, "id": [points.ids[i] for i in indices], "split": [points.splits[i] for i in indices],
        "gold": [points.gold[i] for i in indices], "confidence": points.confidence[indices].round(4),
        "variability": points.variability[indices].round(4), "correctness": points.correctness[indices].round(4),
        "epochs": points.epochs[indices], "region": [points.region[i] for i in indices],
        "augmented": [points.augmented[i] for i in indices], "original": [points.original[i] for i in indices]})
    column, ascending = ORDERS[order]
    if column == "row":
        return frame.reset_index(drop=True)
    return frame.sort_values(column, ascending=ascending, kind="stable").reset_index(drop=True)


def compare_regions(first: DataMap, second: DataMap) -> pd.DataFrame:
    """Pairs per (region on `first`, region on `second`) over the pair ids both maps hold: rows are the
    first map's regions, columns the second's; the ids only one map has are left out (the caller says how many)."""
    import pandas as pd

    other = dict(zip(second.ids, second.region))
    shared = [(r, other[i]) for i, r in zip(first.ids, first.region) if i in other]
    order = [*REGIONS, NOT_TRAINED]
    table = pd.crosstab(pd.Categorical([a for a, _ in shared], categories=order),
                        pd.Categorical([b for _, b in shared], categories=order), dropna=False)
    keep = [name for name in order if name in REGIONS or table.loc[name].sum() or table[name].sum()]
    return pd.DataFrame(table.loc[keep, keep].to_numpy(), index=pd.Index(keep), columns=pd.Index(keep))
