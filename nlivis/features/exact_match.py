"""Binary exact-match flags: does a token of one sentence also occur in the other?

Rules (`EXACT_MATCH_RULES`):
- "form_or_lemma" (default): the DIIN paper's wording, "tokens with same stem or lemma in the other
  sentence": a token is flagged when the other sentence holds a token with the same lowercased form
  or the same lowercased lemma ("dogs" matches "dog", "ran" matches "running").
  The released DIIN features were looser still (Snowball stems and WordNet synonyms); we stay with the
  paper's definition so the flag means what the views say it means.
- "form": the lowercased form only ("Dogs" matches "dogs", not "dog").

Punctuation is treated like any other token: "." in both sentences is flagged, as in the DIIN
features, so the flag stays a pure string test and models see the same input the papers describe.
"""
from __future__ import annotations

from typing import Sequence

EXACT_MATCH_RULES: tuple[str, ...] = ("form_or_lemma", "form")


def _keys(tokens: Sequence[str], lemmas: Sequence[str], rule: str) -> list[set[str]]:
    if rule == "form":
        return [{t.lower()} for t in tokens]
    return [{t.lower(), l.lower()} for t, l in zip(tokens, lemmas)]


def exact_match_flags(
    tokens_a: Sequence[str],
    lemmas_a: Sequence[str],
    tokens_b: Sequence[str],
    lemmas_b: Sequence[str],
    rule: str = "form_or_lemma",
) -> tuple[list[float], list[float]]:
    """Flags (1.0 / 0.0) for every token of sentence a and of sentence b, under `rule`."""
    if rule not in EXACT_MATCH_RULES:
        raise ValueError(f"unknown exact-match rule {rule!r}; choose one of {EXACT_MATCH_RULES}")
    keys_a = _keys(tokens_a, lemmas_a, rule)
    keys_b = _keys(tokens_b, lemmas_b, rule)
    all_a = set().union(*keys_a) if keys_a else set()
    all_b = set().union(*keys_b) if keys_b else set()
    flags_a = [1.0 if keys & all_b else 0.0 for keys in keys_a]
    flags_b = [1.0 if keys & all_a else 0.0 for keys in keys_b]
    return flags_a, flags_b


def match_matrix(
    tokens_a: Sequence[str],
    lemmas_a: Sequence[str],
    tokens_b: Sequence[str],
    lemmas_b: Sequence[str],
    rule: str = "form_or_lemma",
) -> list[list[bool]]:
    """M[i][j]: token i of sentence a and token j of sentence b match under `rule`. A token's exact-match
    flag is whether its row (column) has a match among the tokens present, so the flags of any sentence
    with tokens deleted follow from M without re-reading the text (faithfulness builds its deletions so)."""
    if rule not in EXACT_MATCH_RULES:
        raise ValueError(f"unknown exact-match rule {rule!r}; choose one of {EXACT_MATCH_RULES}")
    keys_b = _keys(tokens_b, lemmas_b, rule)
    return [[bool(keys & other) for other in keys_b] for keys in _keys(tokens_a, lemmas_a, rule)]
