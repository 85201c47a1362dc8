"""Which split a view starts on, given the protocols the shown models were trained under.

A model's training split says little about it (snli-small trains on SNLI *test*), so a view never starts on
one unless nothing else is there; a protocol's report splits are what its users came for (mnli-small reports
on the MultiNLI dev sets, which carry the gold annotation tags of DIIN's Table 7), then its select split.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from nlivis.data.protocols import Protocol, get_protocol, split_key


def protocol_named(name: str | None) -> Protocol | None:
    """The protocol called `name` (a checkpoint's recorded protocol), or None when unknown or missing."""
    if not name:
        return None
    try:
        return get_protocol(str(name))
    except (ValueError, KeyError):
        return None


def training_splits(protocols: Iterable[tuple[str, str | None]]) -> dict[str, list[str]]:
    """Split key → the models (name, protocol name) trained on it."""
    trained: dict[str, list[str]] = {}
    for model, name in protocols:
        protocol = protocol_named(name)
        for ref in protocol.train if protocol is not None else ():
            trained.setdefault(split_key(ref), []).append(model)
    return trained


def default_split(protocols: Sequence[tuple[str, str | None]], available: Sequence[str]) -> str | None:
    """The split a view starts on among `available`: the first model's report splits in order, then its
    select split, then the next model's; then any split no model trained on; a training split only when
    nothing else is available; None when nothing is."""
    trained = training_splits(protocols)
    for _, name in protocols:
        protocol = protocol_named(name)
        if protocol is None:
            continue
        for ref in (*protocol.report, protocol.select):
            if split_key(ref) in available and split_key(ref) not in trained:
                return split_key(ref)
    return next((key for key in available if key not in trained), available[0] if available else None)


def split_label(key: str, trained: dict[str, list[str]]) -> str:
    """A split's name in a picker, saying so when a shown model was trained on it."""
    return f"{key} (training split of {', '.join(trained[key])})" if key in trained else key


MATCHED_PAIRS = (("mnli_dev_matched", "mnli_dev_mismatched"), ("mnli_hard_matched_test", "mnli_hard_mismatched_test"))
"""MultiNLI splits that come as a matched and a mismatched half (DIIN's Table 7 shows them side by side)."""


def matching_split(key: str) -> str | None:
    """The other half of a matched / mismatched pair of splits, or None."""
    for matched, mismatched in MATCHED_PAIRS:
        if key == matched:
            return mismatched
        if key == mismatched:
            return matched
    return None


def split_half(key: str) -> str:
    """"matched" or "mismatched": the Table 7 column group of a MultiNLI split key."""
    return "mismatched" if "mismatched" in key else "matched"
