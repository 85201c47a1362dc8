"""A second judge for the hand audit: draw a blind sample of judged items and measure how far two judges agree.

Every judgement of the audit set was made by the session that wrote the rule it judges, so a label precision of
100% may only say that the author agrees with himself. A second judge reads a seeded random sample of the judged
items without their judgements (`review_sample`) and judges them again; `agreement` says how often the two agree
on the label and on grammar, with Cohen's kappa for the label (agreement beyond what the two judges' own rates of
"right" give by chance), and lists the items they disagree on, which a third look settles. Pure: the items come in.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from nlivis.analysis.audit import Drawn, stable_hash
from nlivis.data.audit_set import AuditItem

REVIEW_SEED = 44
"""The seed of the second judge's sample (session 44 drew the first)."""


def review_sample(drawn: Sequence[Drawn], judged: Sequence[AuditItem], size: int,
                  seed: int = REVIEW_SEED) -> list[Drawn]:
    """`size` of the drawn items that have a judgement with a label claim, those whose key hashes lowest with
    `seed`: a sample independent of the order the items were judged in, the same for the same judged set."""
    claims = {item.key for item in judged if item.judgement.label_right is not None}
    candidates = [item for item in drawn if item.key in claims]
    return sorted(candidates, key=lambda item: stable_hash(str(seed), *item.key))[:size]


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two judges' yes / no answers on the same items (None when chance agreement is 1: both
    judges gave one answer to every item, so agreement beyond chance is undefined)."""
    if not pairs:
        return None
    count = len(pairs)
    observed = sum(first == second for first, second in pairs) / count
    first_yes = sum(first for first, _ in pairs) / count
    second_yes = sum(second for _, second in pairs) / count
    chance = first_yes * second_yes + (1 - first_yes) * (1 - second_yes)
    return None if chance == 1 else round((observed - chance) / (1 - chance), 4)


def agreement(first: Sequence[AuditItem], second: Sequence[AuditItem]) -> dict:
    """How the two judges' judgements of the items both judged compare: counts of the label answers (right by
    both, wrong by both, right by the first only, by the second only), label agreement and kappa, grammatical
    agreement, the keys they disagree on and the items of `second` the first never judged."""
    by_key: Mapping[tuple[str, str, str], AuditItem] = {item.key: item for item in first}
    shared = [(by_key[item.key], item) for item in second if item.key in by_key]
    claimed = [(a, b) for a, b in shared if a.judgement.label_right is not None and b.judgement.label_right is not None]
    labels = [(a.judgement.label_right, b.judgement.label_right) for a, b in claimed]
    grammar = [(a.judgement.grammatical, b.judgement.grammatical) for a, b in shared]
    return {
        "items": len(shared),
        "unknown_to_first": sum(item.key not in by_key for item in second),
        "label": {"both_right": sum(a and b for a, b in labels), "both_wrong": sum(not a and not b for a, b in labels),
                  "first_only_right": sum(a and not b for a, b in labels),
                  "second_only_right": sum(b and not a for a, b in labels),
                  "agree": sum(a == b for a, b in labels), "of": len(labels), "kappa": cohen_kappa(labels)},
        "grammatical": {"agree": sum(a == b for a, b in grammar), "of": len(grammar), "kappa": cohen_kappa(grammar)},
        "label_disagreements": [list(a.key) for a, b in claimed if a.judgement.label_right != b.judgement.label_right],
        "grammar_disagreements": [list(a.key) for a, b in shared if a.judgement.grammatical != b.judgement.grammatical],
    }
