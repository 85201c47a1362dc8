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

import numpy as np

from nlivis.store.dynamics import TrainingDynamics

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
        counts = {name: 0 for name in REGIONS}
        for name in self.region:
            counts[name] = counts.get(name, 0) + 1
        return counts


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
