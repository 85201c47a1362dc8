"""Surface cues of a sentence pair that a model may learn instead of inference, and how much each says about
a label (issue 29: an augmentation whose one-word edits all change the label teaches "one changed word →
contradiction"; one whose negations all sit in the hypothesis teaches "negated hypothesis → not entailment").

- `changed_words`: how many words differ between premise and hypothesis, counted on an alignment of the two
  word sequences (difflib's matching blocks): a replaced span counts its longer side, an inserted or deleted
  span its length. One word swapped → 1, "is" → "is not" → 1, "sits" → "does not sit" → 3. Bucketed by
  `changed_bucket` into 0, 1, 2, 3 and "4+".
- `negation_side`: which sentences hold a negation word (`NEGATION_WORDS`, or a word ending in "n't"):
  "none", "premise", "hypothesis" or "both".
- `mutual_information`: I(cue; label) in bits of a list of (cue value, label), the plug-in estimate: 0 when
  every value of the cue has the same label distribution, as a cue-balanced augmentation makes it.
- `cue_rates`: per value of a cue, how many pairs, and how often each label (gold or predicted) occurs: the
  shortcut a model learned shows as its predicted contradiction rate rising with a cue that gold does not
  follow.

Pure functions of text and labels: no model runs, no files.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from difflib import SequenceMatcher
from typing import Iterable, Mapping, Sequence

from nlivis.analysis.tag_rules import NEGATIVE_WORDS

NEGATION_WORDS = NEGATIVE_WORDS | frozenset({"noone"})
"""The tag rules' negative words (one list: 'not', n't, 'no', 'never', 'nobody' …) and the one-word spelling
'noone' the polarity code also reads."""
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|n't")
CHANGED_BUCKETS = ("0", "1", "2", "3", "4+")
NEGATION_SIDES = ("none", "premise", "hypothesis", "both")
CUES: dict[str, str] = {
    "changed_words": "words changed between premise and hypothesis (an alignment of the two word sequences)",
    "negation_side": "which sentences hold a negation word (not, n't, no, never, nobody, nothing …)",
}


def words(text: str) -> list[str]:
    """Lower-case word tokens ("isn't" stays one token, so the negation test below sees its "n't")."""
    return WORD.findall(text.lower())


def changed_words(premise: str, hypothesis: str) -> int:
    """Words changed between the two sentences (see the module docstring)."""
    before, after = words(premise), words(hypothesis)
    changed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag != "equal":
            changed += max(i2 - i1, j2 - j1)
    return changed


def changed_bucket(count: int) -> str:
    return str(count) if count < 4 else "4+"


def negated(text: str) -> bool:
    return any(word in NEGATION_WORDS or word.endswith("n't") for word in words(text))


def negation_side(premise: str, hypothesis: str) -> str:
    in_premise, in_hypothesis = negated(premise), negated(hypothesis)
    return NEGATION_SIDES[int(in_premise) + 2 * int(in_hypothesis)]


def cue_values(premise: str, hypothesis: str) -> dict[str, str]:
    """Every cue of `CUES` for one pair."""
    return {"changed_words": changed_bucket(changed_words(premise, hypothesis)),
            "negation_side": negation_side(premise, hypothesis)}


def mutual_information(observations: Iterable[tuple[str, str]]) -> float:
    """I(cue; label) in bits of (cue value, label) observations (plug-in estimate; 0.0 for none)."""
    joint = Counter(observations)
    total = sum(joint.values())
    if total == 0:
        return 0.0
    cue_counts: Counter = Counter()
    label_counts: Counter = Counter()
    for (value, label), count in joint.items():
        cue_counts[value] += count
        label_counts[label] += count
    information = sum(count / total * math.log2(count * total / (cue_counts[value] * label_counts[label]))
                      for (value, label), count in joint.items())
    return max(0.0, information)


def cue_information(pairs: Sequence[tuple[str, str]], labels: Sequence[str]) -> dict[str, float]:
    """I(cue; label) in bits for every cue of `CUES` over (premise, hypothesis) pairs and their labels, rounded
    to 4 decimals."""
    values = [cue_values(premise, hypothesis) for premise, hypothesis in pairs]
    return {cue: round(mutual_information((value[cue], label) for value, label in zip(values, labels)), 4)
            for cue in CUES}


def cue_rates(values: Sequence[str], labels: Sequence[str | None],
              order: Sequence[str] = ()) -> list[dict]:
    """Per cue value (in `order`, then any other in sorted order): `pairs` and `rates` (label → % of the
    value's pairs with a label). Pairs without a label (None) are left out."""
    counts: Mapping[str, Counter] = defaultdict(Counter)
    for value, label in zip(values, labels):
        if label is not None:
            counts[value][label] += 1
    ordered = [v for v in order if v in counts] + sorted(v for v in counts if v not in order)
    rows = []
    for value in ordered:
        total = sum(counts[value].values())
        rows.append({"value": value, "pairs": total,
                     "rates": {label: round(100 * n / total, 1) for label, n in sorted(counts[value].items())}})
    return rows


CUE_ORDER = {"changed_words": CHANGED_BUCKETS, "negation_side": NEGATION_SIDES}


def cue_table(pairs: Sequence[tuple[str, str]], gold: Sequence[str | None],
              predicted: Mapping[str, Sequence[str]], label: str) -> dict[str, list[dict]]:
    """Per cue and value: `pairs` (with a gold label), `gold` (% of them whose gold label is `label`) and per
    model (`predicted`: name → one predicted label per pair) the % it predicts `label` and its accuracy —
    a model that learned the cue predicts `label` far more often than gold has it where the cue is on."""
    values = [cue_values(premise, hypothesis) for premise, hypothesis in pairs]
    table = {}
    for cue, order in CUE_ORDER.items():
        rows = []
        for row in cue_rates([v[cue] for v in values], gold, order):
            members = [i for i, v in enumerate(values) if v[cue] == row["value"] and gold[i] is not None]
            models = {name: {"predicted": round(100 * sum(labels[i] == label for i in members) / len(members), 1),
                             "accuracy": round(100 * sum(labels[i] == gold[i] for i in members) / len(members), 1)}
                      for name, labels in predicted.items()}
            rows.append({"value": row["value"], "pairs": row["pairs"], "gold": row["rates"].get(label, 0.0),
                         "models": models})
        table[cue] = rows
    return table
