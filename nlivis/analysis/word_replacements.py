"""Which word replaces which in a one-word substitution: WordNet 3.0 relations of a word's dominant sense, and
the next member of an exclusive category of nlivis's own lexicons (`analysis.lexicons`).

Word sense: a word is substituted only when its first WordNet sense is clearly its most frequent one
(`dominant_synset`: at least half of the word's sense-tagged occurrences and twice the second sense) and the part
of speech spaCy gave it is the word's most frequent one (`dominant_pos`: "young" as a noun, "looking" as a noun
are skipped), and a replacement only when that synset is its own dominant sense too, that part of speech its own
most frequent one ("special" is an adjective first, so never a noun's hypernym) and it was sense-tagged at
least `MIN_REPLACEMENT_COUNT` times in that sense (a common word in that sense: "disembarrass", "departer",
"telecasting" never were); otherwise the word is skipped rather than guessed. Given a set of `known` words (a training split's), replacements are drawn from it only, and a
hypernym is the nearest known one further up ("dog" → "animal" rather than "canid").
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from nlivis.analysis import lexicons
from nlivis.analysis.inflection import plural
from nlivis.features.wordnet import load_wordnet, sense_counts

ABSTRACT_SYNSETS = frozenset({
    "entity.n.01", "physical_entity.n.01", "abstraction.n.06", "object.n.01", "whole.n.02", "artifact.n.01",
    "instrumentality.n.03", "matter.n.03", "causal_agent.n.01", "living_thing.n.01", "organism.n.01",
    "device.n.01", "thing.n.12", "unit.n.03", "group.n.01", "attribute.n.02", "measure.n.02", "act.v.01",
    "act.n.02", "event.n.01", "psychological_feature.n.01", "change.v.01", "be.v.01", "have.v.01", "make.v.03",
})
"""Hypernyms too general to make a natural sentence ("A man plays a device"): never used."""
HYPERNYM_DEPTH = 4
"""Hypernym levels looked through for the nearest unambiguous single-word one."""
KNOWN_HYPERNYM_DEPTH = 8
"""Levels looked through when the hypernym must be a known word (`known`): "dog" passes canid, carnivore,
placental and mammal (words a caption corpus never uses) on its way to "animal"."""
MISLEADING_HYPERNYM_EDGES = frozenset({("wheeled_vehicle.n.01", "container.n.01")})
"""WordNet 3.0 hypernym links that are not an everyday "is a" and are never walked: WordNet files wheeled
vehicles under containers, which made "car" and "bicycle" into "container"."""
DOMINANT_SHARE, DOMINANT_RATIO = 0.5, 2.0
MIN_CONTESTED_COUNT = 5
"""Tagged uses the first sense needs when another sense was tagged too (a word whose other senses were never
tagged, "puppy", passes with fewer)."""
MIN_REPLACEMENT_COUNT = 2
"""Sense-tagged occurrences (WordNet's SemCor counts) a replacement needs in the replaced word's sense: the
frequency list nlivis already ships with WordNet, and the one that counts a word *in that sense*."""
MIN_HYPONYM_COUNT = 5
"""A hyponym is one of many more specific words, so only a common one is taken ("boy" → "sonny" is not)."""
PLURAL_ONLY_NOUNS = frozenset({
    "belongings", "binoculars", "clothes", "congratulations", "earnings", "goggles", "headquarters", "odds",
    "outskirts", "pliers", "premises", "remains", "savings", "scissors", "surroundings", "thanks", "tongs",
})
"""Nouns said only in the plural whose singular WordNet does not list (so `plural_form` cannot find it)."""
WORDNET_SOURCE = "WordNet 3.0, first sense"
WORDNET_POS = ("n", "v", "a", "r")


@lru_cache(maxsize=100_000)
def pos_count(lemma: str, wordnet_pos: str) -> int:
    """How often `lemma` was sense-tagged in this part of speech (all its senses; adjectives with satellites)."""
    return sum(lemma_count(entry) for synset in load_wordnet().synsets(lemma, wordnet_pos)
               for entry in synset.lemmas() if entry.name().lower() == lemma.lower())


def dominant_pos(lemma: str, wordnet_pos: str) -> bool:
    """Whether `wordnet_pos` is the lemma's most frequent part of speech (ties pass): a word read in a part of
    speech it seldom has is not substituted in it, nor chosen as a replacement in it."""
    own = pos_count(lemma, wordnet_pos)
    return all(own >= pos_count(lemma, other) for other in WORDNET_POS if other != wordnet_pos)


@lru_cache(maxsize=100_000)
def dominant_synset(lemma: str, wordnet_pos: str):
    """The lemma's first WordNet sense when it is clearly the most frequent one (sense-tagged counts: at least
    `DOMINANT_SHARE` of the lemma's occurrences, `DOMINANT_RATIO` × the second sense, and `MIN_CONTESTED_COUNT`
    when another sense was tagged too; a lemma with one sense passes, one whose senses were never tagged does
    not), else None."""
    synsets = load_wordnet().synsets(lemma, wordnet_pos)
    if not synsets:
        return None
    if len(synsets) == 1:
        return synsets[0]
    counts = [sum(lemma_count(entry) for entry in synset.lemmas() if entry.name().lower() == lemma.lower())
              for synset in synsets]
    total = sum(counts)
    if total == 0 or counts[0] < DOMINANT_SHARE * total or counts[0] < DOMINANT_RATIO * counts[1]:
        return None
    if counts[0] < MIN_CONTESTED_COUNT and counts[0] < total:
        return None  # "runner" is a smuggler in 3 of its 6 tagged uses: too few to call that its sense
    return synsets[0]


def lemma_count(entry) -> int:
    """How often a WordNet lemma (one word in one sense) was sense-tagged: `features.wordnet.sense_counts`."""
    return sense_counts().get(entry.key().lower(), 0)


def _single_word(name: str) -> bool:
    return name.isalpha() and name.islower()


@lru_cache(maxsize=100_000)
def plural_form(noun: str) -> bool:
    """Whether a WordNet noun lemma is a plural form: the regular plural of another WordNet noun ("colors",
    "steps", "glasses", "pants", "species") or one of `PLURAL_ONLY_NOUNS`. Such a lemma has no number of its own
    to inflect: as a replacement it would become "colorses" for "flags" and "a colors" for "a flag", and as the
    replaced word its singular replacements could not agree with it. "boss", "bus", "glass", "gas", "news" are
    not plural forms (no WordNet noun has them as its plural)."""
    lower = noun.lower()
    if lower in PLURAL_ONLY_NOUNS:
        return True
    # every base form WordNet's morphology finds (NLTK's public `morphy` returns only the first one, "colors")
    return lower.endswith("s") and any(base != lower and plural(base) == lower
                                       for base in load_wordnet()._morphy(lower, "n"))


def _candidates(synset, wordnet_pos: str, exclude: str, min_count: int = MIN_REPLACEMENT_COUNT) -> list[tuple[int, str]]:
    """(count, word) for the synset's single-word lemmas whose own dominant sense is this synset, in their own
    most frequent part of speech, sense-tagged at least `min_count` times in it; no plural-form noun."""
    found = []
    for entry in synset.lemmas():
        name = entry.name()
        if (name.lower() != exclude and _single_word(name) and lemma_count(entry) >= min_count
                and not (wordnet_pos == "n" and plural_form(name))
                and dominant_synset(name, wordnet_pos) == synset and dominant_pos(name, wordnet_pos)):
            found.append((lemma_count(entry), name))
    return found


def _best(candidates: Iterable[tuple[int, str]]) -> str | None:
    ranked = sorted(candidates, key=lambda item: (-item[0], item[1]))
    return ranked[0][1] if ranked else None


@lru_cache(maxsize=100_000)
def wordnet_replacements(lemma: str, wordnet_pos: str, known: frozenset[str] | None = None) -> dict[str, str]:
    """relation → replacement lemma (synonym, hypernym, hyponym, antonym) for the lemma's dominant sense.

    `known` (lower-case words, e.g. a training split's vocabulary) keeps only replacements among them, and
    then hypernyms are looked for `KNOWN_HYPERNYM_DEPTH` levels up, so the nearest *known* one is found."""
    synset = dominant_synset(lemma, wordnet_pos)
    if synset is None or not dominant_pos(lemma, wordnet_pos) or (wordnet_pos == "n" and plural_form(lemma)):
        return {}

    def usable(candidates: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
        return [c for c in candidates if known is None or c[1].lower() in known]

    found: dict[str, str] = {}
    synonym = _best(usable(_candidates(synset, wordnet_pos, lemma))) if synset.pos() != "s" else None
    if synonym:  # an adjective satellite's lemmas are similar, not the same ("red", "carmine", "crimson")
        found["synonym"] = synonym
    level, seen = [synset], {synset}
    for _ in range(HYPERNYM_DEPTH if known is None else KNOWN_HYPERNYM_DEPTH):
        level = [h for s in level for h in (*s.hypernyms(), *s.instance_hypernyms())
                 if h not in seen and h.name() not in ABSTRACT_SYNSETS
                 and (s.name(), h.name()) not in MISLEADING_HYPERNYM_EDGES]
        seen.update(level)
        hypernym = _best(usable(c for s in level for c in _candidates(s, wordnet_pos, lemma)))
        if hypernym:
            found["hypernym"] = hypernym
            break
    hyponym = _best(usable(c for s in synset.hyponyms() for c in _candidates(s, wordnet_pos, lemma, MIN_HYPONYM_COUNT)))
    if hyponym:
        found["hyponym"] = hyponym
    antonyms = [a.name() for entry in synset.lemmas() if entry.name().lower() == lemma.lower()
                for a in entry.antonyms() if _single_word(a.name()) and lemma_count(a) >= MIN_REPLACEMENT_COUNT
                and (known is None or a.name().lower() in known)]
    if antonyms:
        found["antonym"] = antonyms[0]
    return found


EXCLUSIVE_MEMBERS: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {
    member.lower(): (category, members, pos)
    for category, (members, pos) in lexicons.EXCLUSIVE_CATEGORIES.items() for member in members
}


def exclusive_replacement(word: str, pos: str, known: frozenset[str] | None = None) -> tuple[str, str] | None:
    """(category, the next member of the word's exclusive category) when the word is one in this part of
    speech; with `known`, the next member that is a known word (None when no other member is)."""
    entry = EXCLUSIVE_MEMBERS.get(word.lower())
    if entry is None or pos not in entry[2]:
        return None
    category, members, _ = entry
    index = [m.lower() for m in members].index(word.lower())
    for step in range(1, len(members)):
        member = members[(index + step) % len(members)]
        if known is None or member.lower() in known:
            return category, member
    return None
