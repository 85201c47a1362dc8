"""The premise paired with itself, one side edited: Breaking NLI's one-word pairs (Glockner et al. 2018) made
with label logic instead of by hand, and the label-preserving and neutral counterparts of its label-changing
edits (issue 29).

A sentence P entails itself, so every edit of (P, P) relates the two sides by the edit's sentence relation,
which decides the label on either side: P' equivalent to P or weaker (a synonym; a hypernym upward; a hyponym
under negation or in the restrictor of every/no) as hypothesis is entailed; a stronger P' (a hyponym upward, a
hypernym downward) is neutral — P does not say it and is consistent with it; an exclusive or negated P'
contradicts, on either side. As premise the relation reads the other way round. The polarity of the position
comes from `analysis.monotonicity`, through the engine's expectations.
"""
from __future__ import annotations

from collections import Counter
from typing import Sequence

from nlivis.analysis.edit_expectations import (CONTRADICTION, DIRECTION, ENTAILMENT, LABEL, NEUTRAL, NOT_FALL,
                                              NOT_RISE)
from nlivis.analysis.edits import Edit, propose_edits
from nlivis.analysis.near_synonyms import NEAR_SYNONYM, near_synonyms

SELF_LABEL = {"nli": "entailment", "paraphrase": "duplicate"}
"""What a sentence is to itself."""

SWITCHED_OFF_GROUPS: dict[tuple[str, str], str] = {
    ("hypothesis", "neutral"): "label precision 91.7% (33/36) in the hand audit with near-synonyms filtered "
                               "(analysis.near_synonyms), below the 97% floor: a word read in another sense "
                               "(rock → pebble of a curling stone), a replacement already in the sentence (hand → "
                               "fist beside 'a fist'), a plural-only noun (flag → colors)",
    ("premise", "neutral"): "label precision 94.4% (34/36) in the hand audit with near-synonyms filtered, below the "
                            "97% floor: a word read in another sense (queen → insect), the replaced word still said "
                            "elsewhere ('another man' after man → grownup)",
}
"""(edited side, label) groups of self-pair labels that augmentation leaves out, with why; the audit still draws
and judges them (`python -m nlivis audit --section counterparts`), so a fix can be measured before one is
switched back on."""


def switched_off_group(edit: Edit, label: str | None) -> str | None:
    """Why augmentation leaves out this self-pair label (`SWITCHED_OFF_GROUPS`), or None when it uses it."""
    return SWITCHED_OFF_GROUPS.get((edit.side, label)) if label is not None else None


def self_pair_label(edit: Edit, task: str, negation_contradicts: bool) -> str | None:
    """The label of an edit of the premise paired with itself, (P, P') or (P', P), where logic fixes it, else
    None. For NLI the relation of P' to P decides every label, on either side: an equivalent or weaker copy as
    hypothesis is entailed, a stronger one (a hyponym upward, a hypernym downward: "A dog runs" / "A puppy
    runs") is neutral — P does not say it, and it is consistent with P; as premise the other way round; an
    exclusive or negated copy contradicts on either side, contradiction being symmetric. The engine's
    expectation (made with P ⊨ P) names the relation: a fixed label, or the direction it gives a stronger
    hypothesis or a weaker premise. A negated premise gets the label its negated hypothesis got
    (`negation_contradicts`: the engine fixed contradiction for (P, ¬P), which it does only for a definite
    subject — "A man is not sleeping" does not deny "A man is sleeping"). Paraphrase keeps the engine's label."""
    if edit.expectation == LABEL:
        return edit.expected
    if task != "nli" or edit.expectation != DIRECTION:
        if task == "nli" and edit.kind == "negation" and edit.side == "premise" and negation_contradicts:
            return CONTRADICTION
        return None
    stronger_hypothesis = edit.side == "hypothesis" and edit.expected == ENTAILMENT and edit.direction == NOT_RISE
    weaker_premise = edit.side == "premise" and edit.expected == NEUTRAL and edit.direction == NOT_FALL
    return NEUTRAL if stronger_hypothesis or weaker_premise else None


def renamed_copy(edit: Edit, label: str | None) -> bool:
    """Whether a neutral self-pair label rests on a hypernym or hyponym that may only be another word for the
    replaced one (`analysis.near_synonyms`: "man" → "guy", "lady" → "woman"): such a copy is not strictly
    stronger or weaker, so logic does not fix neutral."""
    return (label == NEUTRAL and edit.kind == "substitution" and edit.change.relation in ("hypernym", "hyponym")
            and near_synonyms(edit.change.word, edit.change.replacement, edit.change.relation))


def self_pair_edits(premise: str, task: str, kinds: Sequence[str], known: frozenset[str] | None = None,
                    rejected: Counter | None = None) -> list[tuple[Edit, str | None]]:
    """(edit, label) of every engine edit of (premise, premise) of `kinds` (a swap is no edit of it), each
    edited pair once, the label `self_pair_label` fixes (None where logic fixes none). A neutral copy made with
    a near-synonym (`renamed_copy`) is left out, and counted in `rejected` under `NEAR_SYNONYM`."""
    own = propose_edits(premise, premise, SELF_LABEL[task], task, tuple(k for k in kinds if k != "swap"), known,
                        rejected)
    negation_contradicts = any(e.kind == "negation" and e.side == "hypothesis" and e.expectation == LABEL
                               and e.expected == CONTRADICTION for e in own)
    found, seen = [], set()
    for edit in own:
        if (edit.premise, edit.hypothesis) in seen:
            continue
        seen.add((edit.premise, edit.hypothesis))
        label = self_pair_label(edit, task, negation_contradicts)
        if renamed_copy(edit, label):
            if rejected is not None:
                rejected[NEAR_SYNONYM] += 1
            continue
        found.append((edit, label))
    return found
