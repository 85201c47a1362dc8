"""Which tags score a split, and how DIIN's Table 7 pairs a MultiNLI split with its other half.

Gold tags (the RepEval 2017 human annotation) exist for part of MultiNLI dev; the automatic tags (rules after
Williams et al.) cover the rest. They are never mixed in one number: a pair with gold tags is scored by them
only, the others by their automatic tags. Table 7 puts the matched and mismatched halves side by side with
one tag source for both: gold when both halves have gold tags, else automatic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from nlivis.analysis.breakdown import TaggedSplit, pairs_with_tag, table7_long, table7_with_counts
from nlivis.data.split_choice import matching_split, split_half

Tags = Mapping[str, frozenset[str]]


@dataclass(frozen=True)
class SplitTags:
    """A split's tags by source: `gold` (pair id → human tags, restricted to the split) and `automatic`
    (the rules' tags of the pairs that have no gold tags)."""

    gold: dict[str, frozenset[str]]
    automatic: dict[str, frozenset[str]]

    @property
    def sources(self) -> list[str]:
        """The sources that tag at least one pair, gold first."""
        return [name for name, tags in (("gold", self.gold), ("automatic", self.automatic)) if tags]

    def of(self, source: str) -> dict[str, frozenset[str]]:
        if source not in ("gold", "automatic"):
            raise ValueError(f"tag source must be 'gold' or 'automatic', got {source!r}")
        return self.gold if source == "gold" else self.automatic


def split_tags(split_ids: Sequence[str], gold: Tags, automatic: Tags) -> SplitTags:
    """Gold tags of the split's pairs, and automatic tags of the tagged pairs that have no gold ones."""
    ids = set(split_ids)
    kept_gold = {pair_id: names for pair_id, names in gold.items() if pair_id in ids}
    kept_automatic = {pair_id: names for pair_id, names in automatic.items() if pair_id not in kept_gold}
    return SplitTags(kept_gold, kept_automatic)


@dataclass(frozen=True)
class Table7:
    """Both halves of a MultiNLI split pair, tagged by one source, and the table built from them."""

    source: str
    halves: dict[str, TaggedSplit]
    """"matched" / "mismatched" → predictions (model → list) and tags."""
    splits: dict[str, str]
    """"matched" / "mismatched" → the split key of that half."""
    long: object
    """`breakdown.table7_long`: one row per half × model × tag."""

    def table(self):
        """The Table 7 layout with counts, majority baseline and intervals (`breakdown.table7_with_counts`)."""
        return table7_with_counts(self.long)

    def pairs(self, half: str, tag: str, model: str, only_wrong: bool = False):
        """The pairs behind one cell: the predictions frame of `model` on `half` restricted to `tag`."""
        tagged = self.halves[half]
        return pairs_with_tag(tagged.predictions[model], tagged.tags, tag, only_wrong)


def table7_halves(split: str, predictions: Mapping[str, Sequence], tags: SplitTags,
                  other_predictions: Callable[[str], Mapping[str, Sequence] | None],
                  other_tags: Callable[[str, str], Tags],
                  unavailable: Mapping[str, str] | None = None) -> Table7 | None:
    """DIIN's Table 7 for `split` and its other half, or None when the split has no other half or some model
    shown has no predictions there. `other_predictions(key)` gives the other half's predictions per model
    (None when one is missing); `other_tags(key, source)` its tags from `source` ("gold" or "automatic").
    The source is gold when both halves have gold tags, else automatic for both; `unavailable` (tag → why)
    marks the automatic tags that cannot be decided here."""
    other = matching_split(split)
    if other is None:
        return None
    theirs = other_predictions(other)
    if theirs is None or set(theirs) != set(predictions):
        return None
    source = "gold" if tags.gold and other_tags(other, "gold") else "automatic"
    other_tagged = other_tags(other, source)
    if not other_tagged:
        return None
    halves = {split_half(split): TaggedSplit(dict(predictions), tags.of(source)),
              split_half(other): TaggedSplit(dict(theirs), dict(other_tagged))}
    ordered = {half: halves[half] for half in ("matched", "mismatched")}
    return Table7(source, ordered, {split_half(split): split, split_half(other): other},
                  table7_long(ordered, source=source, unavailable=unavailable))
