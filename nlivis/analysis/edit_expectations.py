"""What logic says a model should do with an edited pair, and only that (the edit engine's expectations).

An expectation (`Expectation`) says:
- "label": logic fixes the new pair's label (`label`);
- "invariant": the new pair means the same, so the prediction must not change;
- "direction": the label is not fixed, but the probability of `label` must move one way (`direction`:
  "fall" — must fall; "not_rise" / "not_fall" — must not move the other way by more than
  `DIRECTION_TOLERANCE`);
- None: logic fixes nothing here; `reason` says why.

It follows from the original label, the side that changed and how the edited sentence relates to the original
(EQUIVALENT, WEAKER, STRONGER, EXCLUSIVE, NEGATED), which for a one-word substitution follows from the word
relation and the polarity of the word's context, as in MoNLI (`word_to_sentence_relation`). The edits
themselves are made by `analysis.edits`.
"""
from __future__ import annotations

from dataclasses import dataclass

from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS

ENTAILMENT, NEUTRAL, CONTRADICTION = NLI_LABELS
NOT_DUPLICATE, DUPLICATE = PARAPHRASE_LABELS
TASK_LABELS: dict[str, tuple[str, ...]] = {"nli": NLI_LABELS, "paraphrase": PARAPHRASE_LABELS}

LABEL, INVARIANT, DIRECTION = "label", "invariant", "direction"
FALL, NOT_RISE, NOT_FALL = "fall", "not_rise", "not_fall"
DIRECTION_TOLERANCE = 0.05
"""How far a probability may move the wrong way under "not_rise" / "not_fall" (numerical noise of a
confident model's near-identical inputs is far below it)."""

# Sentence-level relation of the edited sentence S' to the original S.
EQUIVALENT, WEAKER, STRONGER, EXCLUSIVE, NEGATED = "equivalent", "weaker", "stronger", "exclusive", "negated"


@dataclass(frozen=True)
class Expectation:
    kind: str | None
    label: str | None
    direction: str | None
    reason: str


def word_to_sentence_relation(word_relation: str, polarity: int | None) -> str | None:
    """How a sentence relates to itself with one word replaced, given the word's polarity (MoNLI): a
    synonym keeps it equivalent; a hypernym weakens it in an upward context and strengthens it in a downward
    one (a hyponym the other way round); an antonym or exclusive co-hyponym contradicts it in an upward
    context (read as the same entity) and fixes nothing in a downward one. None where nothing is fixed."""
    if word_relation == "synonym":
        return EQUIVALENT
    if polarity is None:
        return None
    if word_relation == "hypernym":
        return WEAKER if polarity > 0 else STRONGER
    if word_relation == "hyponym":
        return STRONGER if polarity > 0 else WEAKER
    if word_relation in ("antonym", "exclusive"):
        return EXCLUSIVE if polarity > 0 else None
    raise ValueError(f"unknown word relation {word_relation!r}")


def nli_expectation(side: str, relation: str | None, label: str | None, repeated_in_hypothesis: bool = False,
                    what: str = "") -> Expectation:
    """The expectation of an NLI pair whose `side` became `relation` to what it was (see the module's
    docstring). `repeated_in_hypothesis`: a premise word replaced by an exclusive one also stands, upward, in
    the hypothesis. `what` names the change in the reason ("tall → short")."""
    change = f" ({what})" if what else ""
    if relation == EQUIVALENT:
        return _same_meaning_expectation(label, change)
    if relation is None:
        return Expectation(None, None, None, f"the word's context is neither upward nor downward monotone{change} "
                                             "(or the parse does not show it): logic fixes nothing")
    found = (_hypothesis_expectation(relation, label, change) if side == "hypothesis"
             else _premise_expectation(relation, label, change, repeated_in_hypothesis) if side == "premise" else None)
    if found is None:
        raise ValueError(f"no NLI expectation for side {side!r} and relation {relation!r}")
    return found


def _same_meaning_expectation(label: str | None, change: str) -> Expectation:
    """An EQUIVALENT edit, for NLI and paraphrase pairs alike: the known label stays, else the prediction must
    not change."""
    if label is not None:
        return Expectation(LABEL, label, None, f"same meaning{change}: the label stays {label}")
    return Expectation(INVARIANT, None, None, f"same meaning{change}: the prediction must not change")


def _hypothesis_expectation(relation: str, label: str | None, change: str) -> Expectation | None:
    """`nli_expectation` when the hypothesis changed (None for a relation it does not know)."""
    if relation == WEAKER:
        if label == ENTAILMENT:
            return Expectation(LABEL, ENTAILMENT, None, f"the new hypothesis follows from the old one{change}, "
                               "which the premise entails: entailment")
        return Expectation(DIRECTION, ENTAILMENT, NOT_FALL, f"the new hypothesis is weaker{change}: it follows "
                           "from the old one, so entailment can only become more likely; the label is not fixed")
    if relation == STRONGER:
        if label == CONTRADICTION:
            return Expectation(LABEL, CONTRADICTION, None, f"the new hypothesis implies the old one{change}, "
                               "which the premise contradicts: contradiction")
        return Expectation(DIRECTION, ENTAILMENT, NOT_RISE, f"the new hypothesis is stronger{change}: it implies "
                           "the old one, so entailment can only become less likely; the label is not fixed")
    if relation == EXCLUSIVE:
        if label == ENTAILMENT:
            return Expectation(LABEL, CONTRADICTION, None, f"the new hypothesis excludes the old one{change}, "
                               "read as the same entity (as SNLI's annotators read a pair); the premise entails "
                               "the old one, so it contradicts the new one")
        return Expectation(None, None, None, f"the new hypothesis excludes the old one{change}; from "
                           f"{label or 'an unknown label'} that fixes no label")
    if relation == NEGATED:
        if label == ENTAILMENT:
            return Expectation(LABEL, CONTRADICTION, None, "the premise entails the hypothesis, so it contradicts "
                               "its negation (negating the main verb read as negating the hypothesis; annotators "
                               "do not always agree, Hossain et al. 2020)")
        if label == NEUTRAL:
            return Expectation(LABEL, NEUTRAL, None, "the premise decides neither the hypothesis nor its "
                               "negation: neutral")
        if label == CONTRADICTION:
            return Expectation(DIRECTION, CONTRADICTION, FALL, "the premise contradicts the hypothesis and cannot "
                               "contradict its negation too: contradiction must become less likely (logic says "
                               "entailment, but SNLI's contradictions are often incompatible scenes, for which "
                               "the negation does not follow)")
        return Expectation(None, None, None, "negating the hypothesis turns entailment into contradiction and "
                           "keeps neutral; without the original label nothing is fixed")
    return None


def _premise_expectation(relation: str, label: str | None, change: str,
                         repeated_in_hypothesis: bool) -> Expectation | None:
    """`nli_expectation` when the premise changed (None for a relation it does not know)."""
    if relation == STRONGER:
        if label in (ENTAILMENT, CONTRADICTION):
            return Expectation(LABEL, label, None, f"the new premise implies the old one{change}, so it still "
                               f"decides the hypothesis: {label}")
        return Expectation(DIRECTION, NEUTRAL, NOT_RISE, f"the new premise is stronger{change}: it decides at "
                           "least what the old one decided, so neutral can only become less likely")
    if relation == WEAKER:
        if label == NEUTRAL:
            return Expectation(LABEL, NEUTRAL, None, f"the new premise follows from the old one{change}, which "
                               "decided nothing about the hypothesis: neutral")
        return Expectation(DIRECTION, NEUTRAL, NOT_FALL, f"the new premise is weaker{change}: it decides at most "
                           "what the old one decided, so neutral can only become more likely")
    if relation == EXCLUSIVE:
        if label == ENTAILMENT and repeated_in_hypothesis:
            return Expectation(LABEL, CONTRADICTION, None, f"the hypothesis repeats the word the new premise "
                               f"excludes{change}, read as the same entity: contradiction")
        return Expectation(None, None, None, f"the new premise excludes the old one{change}, but "
                           + ("the hypothesis does not repeat the word upward" if label == ENTAILMENT
                              else f"from {label or 'an unknown label'} that fixes no label"))
    if relation == NEGATED:
        return Expectation(None, None, None, "a negated premise says nothing about the hypothesis that logic "
                                             "fixes")
    return None


def paraphrase_expectation(relation: str | None, label: str | None, what: str = "") -> Expectation:
    """The expectation of a question pair one of whose questions became `relation` to what it was."""
    change = f" ({what})" if what else ""
    if relation == EQUIVALENT:
        return _same_meaning_expectation(label, change)
    if relation in (EXCLUSIVE, NEGATED):
        if label == DUPLICATE:
            return Expectation(LABEL, NOT_DUPLICATE, None, f"one question now asks something else{change}: "
                               "not the same question")
        return Expectation(None, None, None, f"one question now asks something else{change}; from "
                           f"{label or 'an unknown label'} that fixes nothing")
    if relation in (WEAKER, STRONGER):
        if label == DUPLICATE:
            return Expectation(DIRECTION, DUPLICATE, NOT_RISE, f"one question became more "
                               f"{'general' if relation == WEAKER else 'specific'}{change}: it may or may not still "
                               "ask the same, so duplicate can only become less likely")
        return Expectation(None, None, None, f"one question became more "
                           f"{'general' if relation == WEAKER else 'specific'}{change}; from "
                           f"{label or 'an unknown label'} that fixes nothing")
    return Expectation(None, None, None, f"the word's context is not monotone{change}: logic fixes nothing")


def swap_expectation(task: str, label: str | None) -> Expectation:
    if task == "paraphrase":
        if label is not None:
            return Expectation(LABEL, label, None, f"being the same question is symmetric: the label stays {label}")
        return Expectation(INVARIANT, None, None, "being the same question is symmetric: the prediction must "
                                                  "not change")
    if label == CONTRADICTION:
        return Expectation(LABEL, CONTRADICTION, None, "contradiction is symmetric: the swapped pair contradicts too")
    if label in (ENTAILMENT, NEUTRAL):
        return Expectation(DIRECTION, CONTRADICTION, NOT_RISE, f"entailment is not symmetric: the swapped {label} "
                           "pair is entailment (when the two say the same) or neutral, never contradiction "
                           "(contradiction is symmetric), so contradiction must not become more likely")
    return Expectation(None, None, None, "contradiction is symmetric, entailment is not; without the original "
                                         "label nothing is fixed")


def invariant_expectation(why: str, label: str | None) -> Expectation:
    stays = f"; the label stays {label}" if label else ""
    return Expectation(INVARIANT, None, None, f"{why}: the prediction must not change{stays}")
