"""Does a model tell a contradicting word swap from one that does not, or does it only say "contradiction" more
often? (issue 29: every augmentation that taught ESAN the unseen exclusive-word swaps cost the upward hypernym
test on some seed; failure rates on the two tests apart cannot say whether a run learnt which swaps contradict or
only moved its bias.)

Two groups of cases of the independent probe suite (`probe_templates`, hand-written words none of nlivis's edit
lexicons holds), one word swapped in a sentence without negation:
- `CONTRADICTING_SWAPS`: a word for another of a category that excludes it ("… swimming in a lake" / "… in a
  river"), gold contradiction;
- `NON_CONTRADICTING_SWAPS`: a hyponym for its hypernym or back in an upward position ("… holding a puppy" /
  "… holding a dog") and a word for a synonym ("… on a couch" / "… on a sofa"), gold entailment or neutral.

The *hit rate* is how often the model answers contradiction on the first group, the *false-alarm rate* how often on
the second, and the **discrimination** their difference (Youden's J): 1 for a model that answers contradiction on
exactly the contradicting swaps, 0 for one that answers it at the same rate whatever the swap, and below 0 for one
that answers it more often where it is wrong. A bias towards contradiction moves both rates; only knowing which
swaps contradict moves the difference. Its 95% interval is Newcombe's (method 10: the two Wilson intervals
combined).

Pure: reads a `probe --json` record (its per-case failures and what each failing case answered).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from nlivis.analysis.edit_expectations import CONTRADICTION
from nlivis.analysis.probe_templates import INDEPENDENT
from nlivis.analysis.significance import wilson_interval

CONTRADICTING_SWAPS = ("Word swap: exclusive words",)
"""Independent capabilities whose every case swaps one word and contradicts."""
NON_CONTRADICTING_SWAPS = ("Monotonicity: upward", "Word swap: synonyms")
"""Independent capabilities whose every case swaps one word, without negation, and does not contradict."""


@dataclass(frozen=True)
class SwapDiscrimination:
    """One model's answers of contradiction on the two groups of swaps (see the module docstring)."""

    contradicting: int
    """Cases of `CONTRADICTING_SWAPS`."""
    hits: int
    """Of them, answered contradiction."""
    non_contradicting: int
    """Cases of `NON_CONTRADICTING_SWAPS`."""
    false_alarms: int
    """Of them, answered contradiction."""

    @property
    def hit_rate(self) -> float:
        return self.hits / self.contradicting

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.non_contradicting

    @property
    def discrimination(self) -> float:
        """Hit rate − false-alarm rate (Youden's J)."""
        return self.hit_rate - self.false_alarm_rate

    @property
    def interval(self) -> tuple[float, float]:
        """Newcombe's 95% interval of `discrimination` from the two Wilson intervals."""
        hit_low, hit_high = wilson_interval(self.hits, self.contradicting)
        alarm_low, alarm_high = wilson_interval(self.false_alarms, self.non_contradicting)
        hit, alarm = self.hit_rate, self.false_alarm_rate
        return (self.discrimination - math.hypot(hit - hit_low, alarm_high - alarm),
                self.discrimination + math.hypot(hit_high - hit, alarm - alarm_low))


def swap_discrimination(record: Mapping[str, Any], name: str) -> SwapDiscrimination | None:
    """Checkpoint `name`'s `SwapDiscrimination` in a `probe --json` record, or None when the record lacks either
    group (a paraphrase suite, or tests switched off) or the checkpoint."""
    counts = {"contradicting": 0, "hits": 0, "non_contradicting": 0, "false_alarms": 0}
    for test in record.get("tests", ()):
        if test.get("generator") != INDEPENDENT or name not in test.get("by_model", {}):
            continue
        failing = test["by_model"][name]["failing"]
        said_contradiction = sum(f["predicted"] == CONTRADICTION for f in failing)
        if test["capability"] in CONTRADICTING_SWAPS:
            counts["contradicting"] += test["cases"]
            counts["hits"] += test["cases"] - len(failing) + said_contradiction
        elif test["capability"] in NON_CONTRADICTING_SWAPS:
            counts["non_contradicting"] += test["cases"]
            counts["false_alarms"] += said_contradiction
    if not counts["contradicting"] or not counts["non_contradicting"]:
        return None
    return SwapDiscrimination(**counts)
