"""When a WordNet hypernym or hyponym is only another word for the same thing, not a more general or a more
specific one — so that replacing one by the other changes the register, not the meaning (issue 29).

WordNet files register variants under the word they rename: *guy* ("an informal term for a youth or man") is a
hyponym of *man*, *lady* ("a polite name for any woman") of *woman*, *mom* ("informal terms for a mother") of
*mother*, *clothes* ("clothing in general") of *clothing*. A true hyponym's gloss is its hypernym plus a
differentia ("a married woman", "a hand with the fingers clenched"); a renaming gloss has none: it says the
synset is a term for its hypernym, or is its hypernym "in general". For the engine's direction expectations
that does not matter (a hyponym "does not raise" entailment, and an equivalent word does not either), but the
self-pair counterparts fix a *neutral* label on a copy that is strictly stronger or strictly weaker than the
original (`analysis.self_pairs`), and a renamed copy is neither: "A man is sleeping" entails "A guy is
sleeping". The hand audit of the counterparts (`python -m nlivis audit --section counterparts`) found
7 of its 9 wrong neutral labels to be such pairs.

Two readings of WordNet's structure say that a hypernym/hyponym pair may be read as the same thing:
- `renames`: every hypernym link between the two synsets is a renaming one (`names_its_hypernym` on the more
  specific synset's gloss). A renaming link followed by a real one ("lady" → "woman" → "grownup") is a real
  hypernym: a grownup need not be a woman;
- the two words share a synset in some sense (WordNet lists them as synonyms there: "gentleman" and "man" are
  both a manservant, "stack" and "pile" an orderly pile), so a reader may take that sense.
"""
from __future__ import annotations

import re
from typing import Iterable

from nlivis.analysis.inflection import plural
from nlivis.analysis.word_replacements import dominant_synset
from nlivis.features.wordnet import load_wordnet

RENAMING_HEADS = ("term", "terms", "name", "names", "word", "words")
"""What a renaming gloss calls its synset: "an informal term for …", "a polite name for …"."""
GENERALISING_TAILS = ("in general", "collectively")
"""What a renaming gloss adds after its hypernym: "clothing in general"."""
DETERMINERS = frozenset({"a", "an", "the", "any", "all"})
NEAR_SYNONYM = "hypernym or hyponym only another word for it (WordNet)"
"""The reason a self-pair counterpart is not made from such a pair (`analysis.self_pairs`)."""
CHAIN_DEPTH = 8
"""Hypernym levels looked through for a chain of renaming links (`word_replacements.KNOWN_HYPERNYM_DEPTH`: the
engine looks no further for a hypernym)."""

_PARENTHESIS = re.compile(r"\([^)]*\)")
_QUOTES = re.compile(r"[`'\"]")
_RENAMING = re.compile(r"^(?:(?:a|an|the)\s+)?(?:[a-z-]+\s+){0,2}?(?:%s)\s+(?:of address\s+)?for\s+(?P<named>.+)$"
                       % "|".join(RENAMING_HEADS))
_GENERALISING = re.compile(r"^(?P<named>.+?)\s+(?:%s)$" % "|".join(GENERALISING_TAILS))
_ALTERNATIVES = re.compile(r"\s*,\s*(?:or\s+)?|\s+or\s+")


def _first_clause(gloss: str) -> str:
    """The gloss's definition proper: before the first ";" (WordNet's examples and notes follow it), without
    parentheses or quotes, lower-case, single-spaced."""
    clause = _QUOTES.sub("", _PARENTHESIS.sub(" ", gloss.split(";")[0].lower()))
    return " ".join(clause.split())


def _named_words(named: str, lemmas: frozenset[str]) -> list[str] | None:
    """The alternatives a renaming gloss names ("a youth or man" → youth, man), each without its determiner,
    or None when one of them is more than a word and no lemma of the hypernym (a description, "beers made from
    wheat", not a name)."""
    found = []
    for alternative in _ALTERNATIVES.split(named.strip()):
        phrase = " ".join(w for w in alternative.split() if w not in DETERMINERS)
        if not phrase or (" " in phrase and phrase not in lemmas):
            return None
        found.append(phrase)
    return found


def _is_one_of(word: str, lemmas: frozenset[str]) -> bool:
    """The word is one of the lemmas, or its plural ("machines" in "machines collectively")."""
    return (word in lemmas or (word.endswith("s") and word[:-1] in lemmas)
            or (word.endswith("es") and word[:-2] in lemmas))


def names_its_hypernym(gloss: str, hypernym_lemmas: Iterable[str]) -> bool:
    """Whether a WordNet gloss defines its synset as another word for its hypernym rather than as a kind of it:
    "[a] [up to two words] term|name|word [of address] for ALTERNATIVES" or "ALTERNATIVES in general |
    collectively", where the alternatives are single words or the hypernym's lemmas (with or without a
    determiner, joined by "or" or commas) and one of them is a lemma of the hypernym (`hypernym_lemmas`, WordNet's spelling: "adult_female"
    reads "adult female"). A gloss with a differentia — "a general name for beers made from wheat", "a married
    woman" — does not."""
    lemmas = frozenset(lemma.replace("_", " ").lower() for lemma in hypernym_lemmas)
    clause = _first_clause(gloss)
    for pattern in (_RENAMING, _GENERALISING):
        match = pattern.match(clause)
        named = _named_words(match.group("named"), lemmas) if match else None
        if named and any(_is_one_of(word, lemmas) for word in named):
            return True
    return False


def renames(specific, general, depth: int = CHAIN_DEPTH) -> bool:
    """Whether WordNet synset `general` is reached from `specific` through hypernym links that only rename
    (`names_its_hypernym` of each link's lower synset), within `depth` levels."""
    level = [specific]
    for _ in range(depth):
        level = [parent for synset in level for parent in (*synset.hypernyms(), *synset.instance_hypernyms())
                 if names_its_hypernym(synset.definition(), parent.lemma_names())]
        if general in level:
            return True
        if not level:
            return False
    return False


def share_a_synset(first: str, second: str, wordnet_pos: str = "n") -> bool:
    """Whether WordNet lists the two lemmas in one synset of this part of speech (synonyms in some sense)."""
    wordnet = load_wordnet()
    return bool(set(wordnet.synsets(first, wordnet_pos)) & set(wordnet.synsets(second, wordnet_pos)))


def noun_lemmas(word: str) -> set[str]:
    """The WordNet noun lemmas the word may be a form of: itself, and each lemma whose plural it is ("men" is
    both a lemma of its own and the plural of "man")."""
    lower = word.lower()
    return {lower} | {entry.name().lower() for synset in load_wordnet().synsets(lower, "n") for entry in synset.lemmas()
                      if plural(entry.name().lower()) == lower}


def near_synonyms(word: str, replacement: str, relation: str) -> bool:
    """Whether a hypernym or hyponym substitution of nouns (`relation`, the words as they stand in the text)
    may leave the meaning as it was: for some reading of the two forms as lemmas (`noun_lemmas`), the two share
    a synset, or the more specific one's dominant sense only renames the other's (`renames`). Dominant senses
    are the engine's (`word_replacements.dominant_synset`)."""
    for first in noun_lemmas(word):
        for second in noun_lemmas(replacement):
            specific, general = (second, first) if relation == "hyponym" else (first, second)
            specific_synset, general_synset = dominant_synset(specific, "n"), dominant_synset(general, "n")
            if share_a_synset(first, second) or (specific_synset is not None and general_synset is not None
                                                 and renames(specific_synset, general_synset)):
                return True
    return False
