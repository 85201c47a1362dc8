"""Automatic annotation tags: the 13 MultiNLI tags of DIIN's Table 7, decided by rules.

The RepEval 2017 release tags 990 MultiNLI dev pairs by hand (`read_tag_file` reads it; it is the
reference, and `merge_tags` / the error analysis prefer it where a pair has gold tags). For every other
pair this module decides the tags from spaCy's analysis with the parser on (tokens, PTB tags, lemmas,
dependencies) and WordNet. Unlike the original MultiNLI tag script, which tested raw substrings of
parse strings ("no" matched "know", "if" matched "life"), every rule looks at whole tokens or lemmas.
`TAG_METHODS` says how each tag is decided and what the rule cannot see; `python -m nlivis tags-report`
measures each rule against the gold tags (precision, recall, F1). Rules were improved from what they
miss and over-tag on that set; no pair id or sentence is written into a rule.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from tqdm import tqdm

from nlivis.data.readers import load_json
from nlivis.data.records import InputError, Pair
from nlivis.features.wordnet import WordNetUnavailable, load_wordnet
from nlivis.features.spacy_pipeline import load_nlp, pipeline_version

TAGS: tuple[str, ...] = (
    "CONDITIONAL", "WORD_OVERLAP", "NEGATION", "ANTO", "LONG_SENTENCE", "TENSE_DIFFERENCE",
    "ACTIVE/PASSIVE", "PARAPHRASE", "QUANTITY/TIME_REASONING", "COREF", "QUANTIFIER", "MODAL", "BELIEF",
)
"""The MultiNLI annotation tags in the row order of DIIN's Table 7."""
TAGGER_VERSION = "4"
"""Bump when a rule changes: cached tags made by other rules are then recomputed."""

# Thresholds and word lists from the tag definitions in DIIN section 4.6 (quoting Williams et al. 2017).
LONG_PREMISE_TOKENS = 30
"""LONG_SENTENCE: the premise is longer than this many tokens ..."""
LONG_HYPOTHESIS_TOKENS = 16
"""... or the hypothesis is longer than this many tokens."""
WORD_OVERLAP_SHARE = 0.70
"""WORD_OVERLAP (RepEval README: "whether hypothesis and premise overlap more than 70%"): more than this
share of the hypothesis's distinct words occur in the premise ("let's look for sticks" after "let's
look for paua shells!": 4 of 5)."""
QUANTIFIER_WORDS = frozenset({
    "much", "enough", "more", "most", "less", "least", "no", "none", "some", "any", "many", "few",
    "several", "almost", "nearly",
})
MODAL_VERBS = frozenset({"can", "could", "may", "might", "must", "will", "would", "should"})
BELIEF_VERBS = frozenset({
    "know", "believe", "understand", "doubt", "think", "suppose", "recognize", "recognise", "forget",
    "remember", "imagine", "mean", "agree", "disagree", "deny", "promise",
})
"""The paper's list; "recognise" is the British spelling of its "recognize"."""

NEGATION_WORDS = frozenset({"not", "n't", "cannot"})
"""NEGATION as the gold annotators used it: sentential 'not' / n't (every one of the 233 gold-tagged
pairs has one, against 98% of the pairs that have one). Negative quantifiers (no, never, nothing,
nobody, none) were not tagged NEGATION; they are in NEGATIVE_WORDS for the polarity test of PARAPHRASE."""
NEGATIVE_WORDS = NEGATION_WORDS | frozenset({"no", "never", "none", "neither", "nor", "nobody", "nothing", "nowhere"})
CONDITIONAL_WORDS = frozenset({"if", "unless"})
COMPLEMENT_CLAUSE_DEPS = frozenset({"ccomp", "xcomp", "csubj"})
"""'if' heading a complement clause ("I wonder if he came") asks a question; it is not a conditional."""
PASSIVE_DEPS = frozenset({"nsubjpass", "auxpass", "csubjpass"})
CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"})
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
ANTONYM_POS: dict[str, tuple[str, ...]] = {"NOUN": ("n",), "VERB": ("v",), "ADJ": ("a",), "ADV": ("r", "a"),
                                           "ADP": ("r", "a")}
"""WordNet parts of speech searched for antonyms of a token with this spaCy POS: WordNet has no
prepositions, so 'inside'/'outside', 'above'/'below' (spaCy ADP) are looked up as adverbs and adjectives."""
OPPOSITE_FUNCTION_WORDS: frozenset[tuple[str, str]] = frozenset(
    pair for a, b in (("all", "some"), ("all", "no"), ("all", "none"), ("some", "no"), ("some", "none"),
                      ("every", "no"), ("everyone", "nobody"), ("everybody", "nobody"), ("everything", "nothing"),
                      ("many", "few"), ("always", "never"), ("always", "sometimes"), ("sometimes", "never"),
                      ("always", "rarely"), ("often", "rarely"), ("often", "never"))
    for pair in ((a, b), (b, a)))
"""Opposite quantifiers and frequency adverbs, which WordNet does not list as antonyms ('some' vs
'all', 'always' vs 'never'); the gold ANTO tags include such pairs."""
PARAPHRASE_COVERAGE = 0.7
"""PARAPHRASE: share of each sentence's content lemmas that must be matched in the other sentence."""
MONTH_NAMES = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december",
})
TIME_WORDS = MONTH_NAMES | frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
    "sunday", "time", "morning", "afternoon", "evening", "night", "tonight", "today", "tomorrow",
    "yesterday", "week", "weekend", "hour", "minute", "day", "month", "year", "decade", "century",
    "noon", "midnight", "dawn", "dusk", "daily", "weekly", "monthly", "yearly", "hourly", "annual",
    "ago", "o'clock", "recently", "later", "earlier", "before", "after", "during", "since", "until",
})
"""Time vocabulary for QUANTITY/TIME_REASONING (lower-cased lemmas); month names count only when tagged
as nouns, so the modal 'may' and the verb 'march' are not time words."""
QUANTITY_WORDS = frozenset({"more", "less", "fewer", "least", "most", "than", "half", "double", "once",
                            "twice", "dozen", "hundred", "thousand", "million", "billion", "percent"})
"""Quantity cues besides numbers (CD tags) for QUANTITY/TIME_REASONING."""
SINGULAR_PRONOUNS = frozenset({"he", "him", "his", "she", "her", "hers", "it", "its"})
FEMININE_PRONOUNS = frozenset({"she", "her", "hers"})
NOT_ANTECEDENTS = frozenset({"one"})
"""Nouns COREF does not take as the antecedent of she/her: spaCy tags 'one' NN ('no one', 'one of'), but a
feminine pronoun after it refers to a person of the premise."""
PLURAL_PRONOUNS = frozenset({"they", "them", "their", "theirs"})

TAG_METHODS: dict[str, str] = {
    "CONDITIONAL": "a token 'if' or 'unless' in either sentence, except when it heads a complement "
                   "clause (dependency ccomp/xcomp/csubj, as in 'I wonder if ...') or follows 'as' "
                   "('as if'). Whole tokens only: 'life' never counts. Cannot see conditionals without "
                   "those words ('had I known', 'in case', 'provided that').",
    "WORD_OVERLAP": "more than 70% of the hypothesis's distinct words (lower-cased, punctuation left out) "
                    "occur in the premise, as the RepEval README defines it. Sees only shared word forms; "
                    "the annotators also weighed how much of the premise is kept, which the rule cannot, "
                    "so it fires on three times as many pairs as they tagged.",
    "NEGATION": "sentential negation: a 'not', n't or 'cannot' in either sentence, which is what the "
                "annotators tagged (all 233 gold pairs have one). Negative quantifiers (no, never, nothing, "
                "nobody, none) are not NEGATION here (they are QUANTIFIER); 'no matter what' negates nothing.",
    "ANTO": "a WordNet 3.0 direct antonym pair between a premise word and a hypothesis word (nouns, verbs, "
            "adjectives, adverbs; prepositions such as inside/outside are looked up as adverbs and "
            "adjectives), or opposite quantifiers / frequency adverbs WordNet lacks (some/all, always/never). "
            "Cannot see opposites WordNet does not list as antonyms, and fires on any antonym pair even "
            "where the annotators judged it beside the point. Unavailable (reported, not silently empty) "
            "without WordNet.",
    "LONG_SENTENCE": "the premise has more than 30 or the hypothesis more than 16 tokens (spaCy tokens, "
                     "punctuation not counted). Counts tokens, as the definition does; the annotators "
                     "counted words by eye, so pairs at the thresholds can differ.",
    "TENSE_DIFFERENCE": "the hypothesis's main clause is in a tense or aspect (past / present / future / "
                        "other modal, + perfect, + progressive, from the verb and its auxiliaries) that no "
                        "finite clause of the premise uses. Cannot see tense carried by time words "
                        "('yesterday') or judge whether the difference matters, which the annotators did.",
    "ACTIVE/PASSIVE": "the main clauses differ in voice (a passive ROOT governs nsubjpass / auxpass / "
                      "csubjpass) and the same verb lemma is passive in one sentence and active in the "
                      "other. Cannot see a voice change told with another verb ('denies' vs 'has been "
                      "repudiated') or one inside a subordinate clause.",
    "PARAPHRASE": "APPROXIMATE (the annotators judged 'close paraphrases' by hand): at least 70% of each "
                  "sentence's content words (nouns, verbs, adjectives, adverbs; numbers and quantifiers "
                  "count even though spaCy lists them as stop words) are matched in the other sentence by "
                  "the same lemma or a WordNet synonym, the word sequences differ, the numbers and "
                  "quantifiers are the same, both sentences have as many negators (not, n't, no, never, "
                  "nothing ...), and there is no antonym pair. Cannot see paraphrases built from "
                  "different words ('R&D is made up of' for 'research and development is composed of'). "
                  "Unavailable without WordNet.",
    "QUANTITY/TIME_REASONING": "APPROXIMATE (the annotators judged whether reasoning is needed): both "
                               "sentences contain a quantity expression (a CD number or a word such as "
                               "more/less/fewer/than/half/dozen) and the hypothesis has one the premise "
                               "does not (two vs. three, two vs. 2); or the same holds for time "
                               "expressions (a month or weekday noun, hour, year, ago, before/after, ...). "
                               "Cannot tell a restated number (two vs. 2) from one that needs arithmetic.",
    "COREF": "APPROXIMATE (no coreference resolver is used): the hypothesis contains a third-person "
             "pronoun (he/him/his/she/her/it/its/they/them/their) that the premise does not use itself "
             "and no number-compatible noun earlier in the hypothesis could resolve (singular pronouns: "
             "NN/NNP nouns other than 'one' for she/her; plural pronouns: NNS/NNPS nouns), so its referent "
             "must come from the premise "
             "(requiring a matching premise noun as well measured worse). Cannot see referring noun "
             "phrases ('the first plane' for 'American 11') or first/second-person shifts ('we' for 'you "
             "and I'), which most gold COREF pairs are, nor whether 'it' refers at all.",
    "QUANTIFIER": "a token from the paper's list in either sentence: much, enough, more, most, less, "
                  "least, no, none, some, any, many, few, several, almost, nearly; not the answer 'No, ...' "
                  "(an interjection). Sees the list only: 'all', 'every', 'each' are not on it.",
    "MODAL": "a modal (PTB tag MD) written out as a word of the paper's list in either sentence: can, could, "
             "may, might, must, will, would, should (the noun 'can' and the month 'May' do not count). "
             "The contractions 'll, 'd, can't, won't are left out, as the annotators mostly left them.",
    "BELIEF": "a verb (PTB tag VB*) whose lemma is in the paper's list in either sentence: know, "
              "believe, understand, doubt, think, suppose, recognize, forget, remember, imagine, mean, "
              "agree, disagree, deny, promise, used by a holder: not a passive or adjectival participle "
              "('is known to be', 'well-known'), not 'supposed to', not a bare gerund ('knowing that'); "
              "the noun 'doubt' does not count. Cannot see belief verbs off the list (trust, figure).",
}
"""How each tag is decided, and what the rule can and cannot see (measured against the gold tags by
`python -m nlivis tags-report`)."""


APPROXIMATE_F1 = 0.5
"""An automatic tag whose F1 against the gold tags is below this on either half of the annotated MultiNLI dev
pairs is marked approximate in every breakdown."""
TAG_QUALITY: dict[str, tuple[float, float]] = {
    "CONDITIONAL": (0.913, 0.962), "WORD_OVERLAP": (0.409, 0.543), "NEGATION": (0.989, 0.990),
    "ANTO": (0.681, 0.784), "LONG_SENTENCE": (0.971, 0.973), "TENSE_DIFFERENCE": (0.444, 0.224),
    "ACTIVE/PASSIVE": (0.467, 0.667), "PARAPHRASE": (0.269, 0.381), "QUANTITY/TIME_REASONING": (0.381, 0.552),
    "COREF": (0.286, 0.237), "QUANTIFIER": (0.969, 0.969), "MODAL": (0.986, 0.958), "BELIEF": (0.923, 0.882),
}
"""Tag → F1 of this tagger version (`TAGGER_VERSION`) against the RepEval gold tags on MultiNLI dev (matched,
mismatched), as `python -m nlivis tags-report --data-dir ../shared/data` measures it (a test with the data
checks these numbers). See `RULES_TUNED_ON` for why neither half is held out."""
RULES_TUNED_ON = (
    "both halves: the rules were refined against the gold tags of all 987 joinable annotated pairs (matched "
    "and mismatched) up to tagger version 3, and version 4's two fixes (PARAPHRASE counts negators per side, "
    "COREF takes no 'one' as the antecedent of she/her) came from a review of disagreements in either half. "
    "Neither half is held out, so both F1 columns are in-sample; the worse half is the closer stand-in for "
    "quality on unseen pairs, and a tag below 0.5 there is marked approximate.")


def approximate_tags() -> dict[str, str]:
    """Automatic tags whose rule agrees poorly with the annotators (F1 below `APPROXIMATE_F1` on either half,
    `TAG_QUALITY`), with a sentence saying so for a breakdown's status."""
    return {tag: f"F1 {matched:.2f} on MultiNLI dev matched / {mismatched:.2f} mismatched against the gold tags "
                 f"(below {APPROXIMATE_F1} on the worse half; rules tuned on both halves: tags-report)"
            for tag, (matched, mismatched) in TAG_QUALITY.items() if min(matched, mismatched) < APPROXIMATE_F1}


class TagFileError(InputError):
    """A hand-annotated tag file that cannot be read; the message names file and line."""


@dataclass(frozen=True)
class _Token:
    """What the rules need of one spaCy token (plain values, so rules are easy to test)."""

    index: int
    text: str
    lower: str
    lemma: str
    tag: str
    pos: str
    dep: str
    head: int
    is_punct: bool
    is_stop: bool


def _tokens(doc) -> list[_Token]:
    return [
        _Token(t.i, t.text, t.lower_, t.lemma_.lower(), t.tag_, t.pos_, t.dep_, t.head.i,
               t.is_punct, t.is_stop)
        for t in doc if not t.is_space
    ]


def _words(tokens: Sequence[_Token]) -> list[_Token]:
    return [t for t in tokens if not t.is_punct]


# ---------------------------------------------------------------- single-sentence cues

def _has_conditional(tokens: Sequence[_Token]) -> bool:
    by_index = {t.index: t for t in tokens}
    for position, token in enumerate(tokens):
        if token.lower not in CONDITIONAL_WORDS:
            continue
        if position > 0 and tokens[position - 1].lower == "as":
            continue
        head = by_index.get(token.head)
        if head is not None and head.index != token.index and head.dep in COMPLEMENT_CLAUSE_DEPS:
            continue
        return True
    return False


def _has_negation(tokens: Sequence[_Token]) -> bool:
    return any(t.lower in NEGATION_WORDS or t.lemma == "not" for t in tokens)


def _is_no_matter(tokens: Sequence[_Token], position: int) -> bool:
    """'no matter what/how ...' concedes; it denies nothing."""
    return (tokens[position].lower == "no" and position + 1 < len(tokens)
            and tokens[position + 1].lower == "matter")


def _negator_count(tokens: Sequence[_Token]) -> int:
    """How many negative words, 'not' / n't or 'no', 'never', 'nothing' ... ('no matter' excepted) a sentence
    has: for PARAPHRASE, where 'nobody came' and 'everybody came' must not count as a paraphrase, nor 'people
    can withdraw ... there is no assurance' and 'people can't withdraw ... there is no assurance' (one
    negator against two: a presence test passed that pair)."""
    return sum((t.lower in NEGATIVE_WORDS or t.lemma == "not") and not _is_no_matter(tokens, i)
               for i, t in enumerate(tokens))


def _has_quantifier(tokens: Sequence[_Token]) -> bool:
    """A word from the list, except the answer particle 'No, ...' (spaCy INTJ), which quantifies nothing."""
    return any(t.lower in QUANTIFIER_WORDS and t.pos != "INTJ" for t in tokens)


def _has_modal(tokens: Sequence[_Token]) -> bool:
    """A modal (MD) written out as a word of the list; the contracted forms 'll, 'd, ca(n't), wo(n't)
    are left out, as the annotators mostly left them (they tagged 9 of 23 pairs with 'll, 4 of 11
    with can't)."""
    return any(t.tag == "MD" and t.lower in MODAL_VERBS for t in tokens)


def _children(tokens: Sequence[_Token], head: _Token) -> list[_Token]:
    return [t for t in tokens if t.head == head.index and t.index != head.index]


def _is_belief_use(token: _Token, tokens: Sequence[_Token]) -> bool:
    """A verb from the list used as an attitude of a holder: not a passive or adjectival participle
    ('is known to be', 'well-known', 'can be thought of'), not 'supposed to', not a bare gerund."""
    if not token.tag.startswith("VB") or token.lemma not in BELIEF_VERBS:
        return False
    children = _children(tokens, token)
    if token.tag == "VBN" and (token.dep in ("amod", "acl") or any(c.dep == "auxpass" for c in children)):
        return False
    if token.lemma == "suppose" and any(c.dep == "xcomp" for c in children):
        return False
    if token.tag == "VBG" and not any(c.dep == "aux" for c in children):
        return False  # a gerund ('knowing that ...', 'by understanding issues') names no believer
    return True


def _has_belief_verb(tokens: Sequence[_Token]) -> bool:
    return any(_is_belief_use(t, tokens) for t in tokens)


def _clause_tense(tokens: Sequence[_Token], verb: _Token) -> str | None:
    """Tense and aspect of the clause headed by `verb`, from the verb and its auxiliaries: past /
    present / future (will, shall) / modal (another modal), plus "+perfect" (have + VBN) and
    "+progressive" (be + VBG); None for a non-finite clause."""
    auxiliaries = [t for t in _children(tokens, verb) if t.dep in ("aux", "auxpass")]
    clause = [verb, *auxiliaries]
    tags = {t.tag for t in clause}
    if any(t.tag == "MD" and t.lemma in ("will", "shall") for t in clause):
        tense = "future"
    elif "MD" in tags:
        tense = "modal"
    elif "VBD" in tags:
        tense = "past"
    elif tags & {"VBZ", "VBP"}:
        tense = "present"
    else:
        return None
    if verb.tag == "VBN" and any(t.lemma == "have" and t.dep == "aux" for t in auxiliaries):
        tense += "+perfect"
    if verb.tag == "VBG" and any(t.lemma == "be" for t in auxiliaries):
        tense += "+progressive"
    return tense


def _main_clause_tense(tokens: Sequence[_Token]) -> str | None:
    """Tense and aspect of the ROOT clause; None for verbless fragments."""
    root = next((t for t in tokens if t.dep == "ROOT"), None)
    return _clause_tense(tokens, root) if root is not None else None


def _finite_clause_tenses(tokens: Sequence[_Token]) -> set[str]:
    return {tense for t in tokens if t.pos in ("VERB", "AUX") and t.dep not in ("aux", "auxpass")
            for tense in [_clause_tense(tokens, t)] if tense}


def _has_tense_difference(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    """The hypothesis's main clause is in a tense or aspect that no finite clause of the premise uses."""
    hypothesis_tense = _main_clause_tense(hypothesis)
    premise_tenses = _finite_clause_tenses(premise)
    return bool(hypothesis_tense and premise_tenses and hypothesis_tense not in premise_tenses)


def _voice_lemmas(tokens: Sequence[_Token]) -> tuple[set[str], set[str]]:
    """(lemmas of verbs used in the passive, lemmas of verbs used in the active)."""
    passive_heads = {t.head for t in tokens if t.dep in PASSIVE_DEPS}
    passive, active = set(), set()
    for token in tokens:
        if token.pos != "VERB":
            continue
        (passive if token.index in passive_heads else active).add(token.lemma)
    return passive, active


QUANTITY_BEARING_WORDS = QUANTIFIER_WORDS | frozenset({"all", "every", "each", "both", "either", "neither"})
"""Words spaCy lists as stop words that still change what a sentence says ('two' vs 'three' men,
'some' vs 'all'): PARAPHRASE keeps them, with numbers, among the words to match."""


def _quantity_bearing(tokens: Sequence[_Token]) -> set[str]:
    return {t.lower for t in tokens if t.pos == "NUM" or t.tag == "CD" or t.lower in QUANTITY_BEARING_WORDS}


def _main_clause_voice(tokens: Sequence[_Token]) -> str | None:
    """passive / active for a ROOT verb with a (passive) subject; None for fragments."""
    root = next((t for t in tokens if t.dep == "ROOT"), None)
    if root is None or root.pos not in ("VERB", "AUX"):
        return None
    dependents = {t.dep for t in _children(tokens, root)}
    if dependents & PASSIVE_DEPS:
        return "passive"
    return "active" if dependents & {"nsubj", "csubj"} else None


def _has_voice_change(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    """The main clauses differ in voice, and some verb lemma is passive on one side and active on the
    other (the same event told the other way round)."""
    premise_voice, hypothesis_voice = _main_clause_voice(premise), _main_clause_voice(hypothesis)
    if not premise_voice or not hypothesis_voice or premise_voice == hypothesis_voice:
        return False
    premise_passive, premise_active = _voice_lemmas(premise)
    hypothesis_passive, hypothesis_active = _voice_lemmas(hypothesis)
    return bool((premise_passive & hypothesis_active) or (hypothesis_passive & premise_active))


def _content_lemmas(tokens: Sequence[_Token]) -> list[_Token]:
    """Nouns, verbs, adjectives, adverbs and numbers that are not stop words, plus numbers and
    quantifiers even when spaCy lists them as stop words."""
    return [t for t in tokens if not t.is_punct and (
        (t.pos in CONTENT_POS and not t.is_stop) or t.pos == "NUM" or t.tag == "CD" or t.lower in QUANTITY_BEARING_WORDS)]


def _quantity_time_expressions(tokens: Sequence[_Token]) -> tuple[set[str], set[str]]:
    """(quantity expressions, time expressions) of a sentence, as lower-cased words."""
    quantities, times = set(), set()
    for token in tokens:
        if token.tag == "CD" or token.pos == "NUM" or token.lower in QUANTITY_WORDS:
            quantities.add(token.lower)
        elif token.lemma in TIME_WORDS and (token.lemma not in MONTH_NAMES or token.tag in ("NNP", "NN")):
            times.add(token.lower)
    return quantities, times


def _needs_quantity_or_time_reasoning(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    premise_kinds = _quantity_time_expressions(premise)
    hypothesis_kinds = _quantity_time_expressions(hypothesis)
    return any(in_premise and in_hypothesis and not in_hypothesis <= in_premise
               for in_premise, in_hypothesis in zip(premise_kinds, hypothesis_kinds))


def _is_long(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    return len(_words(premise)) > LONG_PREMISE_TOKENS or len(_words(hypothesis)) > LONG_HYPOTHESIS_TOKENS


def _word_overlap(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    hypothesis_words = {t.lower for t in _words(hypothesis)}
    premise_words = {t.lower for t in _words(premise)}
    if not premise_words or not hypothesis_words:
        return False
    return len(hypothesis_words & premise_words) / len(hypothesis_words) > WORD_OVERLAP_SHARE


def _needs_premise_antecedent(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    def compatible(noun: _Token, pronoun: _Token, plural: bool) -> bool:
        if pronoun.lower in FEMININE_PRONOUNS and noun.lower in NOT_ANTECEDENTS:
            return False  # 'No one would read one of her books': 'her' is someone of the premise
        return noun.tag in (("NNS", "NNPS") if plural else ("NN", "NNP"))

    premise_words = {t.lower for t in premise}
    for position, token in enumerate(hypothesis):
        if not token.tag.startswith("PRP") or token.lower in premise_words:
            continue
        plural = token.lower in PLURAL_PRONOUNS
        if not plural and token.lower not in SINGULAR_PRONOUNS:
            continue
        if any(compatible(t, token, plural) for t in hypothesis[:position]):
            continue
        return True
    return False


# ---------------------------------------------------------------- WordNet cues

@lru_cache(maxsize=50_000)
def _antonyms(lemma: str, wordnet_pos: str) -> frozenset[str]:
    wordnet = load_wordnet()
    names = set()
    for entry in wordnet.lemmas(lemma, wordnet_pos):
        for antonym in entry.antonyms():
            names.add(antonym.name().lower().replace("_", " "))
    return frozenset(names)


@lru_cache(maxsize=50_000)
def _synonyms(lemma: str, wordnet_pos: str) -> frozenset[str]:
    wordnet = load_wordnet()
    return frozenset(name.lower().replace("_", " ")
                     for synset in wordnet.synsets(lemma, wordnet_pos) for name in synset.lemma_names())


def _wordnet_forms(token: _Token) -> set[str]:
    return {token.lemma, token.lower}


def _has_opposite_function_words(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    premise_words, hypothesis_words = {t.lower for t in premise}, {t.lower for t in hypothesis}
    return any(a in premise_words and b in hypothesis_words and a not in hypothesis_words
               for a, b in OPPOSITE_FUNCTION_WORDS)


def _has_antonym_pair(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    def pairs_from(source: Sequence[_Token], other: Sequence[_Token]) -> bool:
        other_forms = set().union(*(_wordnet_forms(t) for t in other)) if other else set()
        for token in source:
            for wordnet_pos in ANTONYM_POS.get(token.pos, ()):
                for form in _wordnet_forms(token):
                    if _antonyms(form, wordnet_pos) & other_forms:
                        return True
        return False

    return (pairs_from(premise, hypothesis) or pairs_from(hypothesis, premise)
            or _has_opposite_function_words(premise, hypothesis))


def _is_paraphrase(premise: Sequence[_Token], hypothesis: Sequence[_Token]) -> bool:
    premise_content, hypothesis_content = _content_lemmas(premise), _content_lemmas(hypothesis)
    if not premise_content or not hypothesis_content:
        return False
    if [t.lemma for t in _words(premise)] == [t.lemma for t in _words(hypothesis)]:
        return False  # the same words in the same order, at most inflected differently
    if _negator_count(premise) != _negator_count(hypothesis):
        return False
    if _has_antonym_pair(premise, hypothesis):
        return False
    if _quantity_bearing(premise_content) != _quantity_bearing(hypothesis_content):
        return False  # 'two men' / 'three men', 'some' / 'all': a different claim, however many words match

    def coverage(source: Sequence[_Token], other: Sequence[_Token]) -> float:
        other_lemmas = {t.lemma for t in other}
        matched = 0
        for token in source:
            if token.lemma in other_lemmas:
                matched += 1
            elif token.pos in WORDNET_POS:
                if _synonyms(token.lemma, WORDNET_POS[token.pos]) & other_lemmas:
                    matched += 1
        return matched / len(source)

    return (coverage(premise_content, hypothesis_content) >= PARAPHRASE_COVERAGE
            and coverage(hypothesis_content, premise_content) >= PARAPHRASE_COVERAGE)


WORDNET_TAGS = ("ANTO", "PARAPHRASE")
"""Tags whose rule needs WordNet (antonyms; synonyms and antonyms): without it they are unavailable, never
computed by a weaker rule whose measured quality would not apply, nor counted as 0."""


def unavailable_tags() -> dict[str, str]:
    """Tags that cannot be decided here, with the reason (`WORDNET_TAGS` without WordNet)."""
    try:
        load_wordnet()
    except WordNetUnavailable as error:
        return {tag: f"{tag} needs WordNet: {error}" for tag in WORDNET_TAGS}
    return {}


# ---------------------------------------------------------------- public API

def tag_pair(premise_doc, hypothesis_doc) -> set[str]:
    """The tags of one pair from two spaCy Docs parsed with the dependency parser on."""
    return _tag(premise_doc, hypothesis_doc, use_wordnet=not unavailable_tags())


def _tag(premise_doc, hypothesis_doc, use_wordnet: bool) -> set[str]:
    premise, hypothesis = _tokens(premise_doc), _tokens(hypothesis_doc)
    tags = set()
    if _has_conditional(premise) or _has_conditional(hypothesis):
        tags.add("CONDITIONAL")
    if _word_overlap(premise, hypothesis):
        tags.add("WORD_OVERLAP")
    if _has_negation(premise) or _has_negation(hypothesis):
        tags.add("NEGATION")
    if use_wordnet and _has_antonym_pair(premise, hypothesis):
        tags.add("ANTO")
    if _is_long(premise, hypothesis):
        tags.add("LONG_SENTENCE")
    if _has_tense_difference(premise, hypothesis):
        tags.add("TENSE_DIFFERENCE")
    if _has_voice_change(premise, hypothesis):
        tags.add("ACTIVE/PASSIVE")
    if use_wordnet and _is_paraphrase(premise, hypothesis):
        tags.add("PARAPHRASE")
    if _needs_quantity_or_time_reasoning(premise, hypothesis):
        tags.add("QUANTITY/TIME_REASONING")
    if _needs_premise_antecedent(premise, hypothesis):
        tags.add("COREF")
    if _has_quantifier(premise) or _has_quantifier(hypothesis):
        tags.add("QUANTIFIER")
    if _has_modal(premise) or _has_modal(hypothesis):
        tags.add("MODAL")
    if _has_belief_verb(premise) or _has_belief_verb(hypothesis):
        tags.add("BELIEF")
    return tags


def tag_pairs(pairs: Sequence[Pair], progress: bool | Callable[[int, int], None] = False,
              batch_size: int = 256) -> dict[str, frozenset[str]]:
    """Tags for every pair (pair id → tags), parsing premises and hypotheses in batches.

    `progress`: True shows a tqdm bar; a callable gets (pairs done, total) every `batch_size` pairs.
    Warns once when tags cannot be decided (ANTO and PARAPHRASE without WordNet, see `unavailable_tags`),
    so a view can say so.
    """
    nlp = load_nlp(with_parser=True)
    missing = unavailable_tags()
    if missing:
        warnings.warn("; ".join(missing.values()), stacklevel=2)
    premise_docs = nlp.pipe((p.premise for p in pairs), batch_size=batch_size)
    hypothesis_docs = nlp.pipe((p.hypothesis for p in pairs), batch_size=batch_size)
    parsed: Iterable = zip(pairs, premise_docs, hypothesis_docs)
    if progress is True:
        parsed = tqdm(parsed, total=len(pairs), desc="tagging pairs", unit="pair")
    tags: dict[str, frozenset[str]] = {}
    for done, (pair, premise_doc, hypothesis_doc) in enumerate(parsed, start=1):
        tags[pair.id] = frozenset(_tag(premise_doc, hypothesis_doc, use_wordnet=not missing))
        if callable(progress) and (done % batch_size == 0 or done == len(pairs)):
            progress(done, len(pairs))
    return tags


def default_tag_cache_dir() -> Path:
    return Path.home() / ".cache" / "nlivis" / "tags"


def tag_cache_key(pairs: Sequence[Pair]) -> str:
    """What cached tags depend on: the rules' version, the spaCy pipeline, WordNet's availability and
    every pair's id and text."""
    digest = hashlib.sha256()
    digest.update(f"{TAGGER_VERSION}|{pipeline_version(True)}|wordnet={not unavailable_tags()}\n".encode())
    for pair in pairs:
        digest.update(f"{pair.id}\t{pair.premise}\t{pair.hypothesis}\n".encode())
    return digest.hexdigest()[:24]


def cached_tag_pairs(pairs: Sequence[Pair], cache_dir: str | Path | None = None,
                     progress: bool | Callable[[int, int], None] = False) -> dict[str, frozenset[str]]:
    """`tag_pairs`, stored as JSON under `cache_dir` (default ~/.cache/nlivis/tags): parsing a dev set
    with the dependency parser takes minutes on a CPU, reading the result back takes milliseconds."""
    folder = Path(cache_dir) if cache_dir is not None else default_tag_cache_dir()
    path = folder / f"tags-{tag_cache_key(pairs)}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        return {pair_id: frozenset(names) for pair_id, names in stored.items()}
    except (OSError, ValueError, AttributeError):
        pass  # absent or damaged: compute again
    tags = tag_pairs(pairs, progress=progress)
    folder.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump({pair_id: sorted(names) for pair_id, names in tags.items()}, handle)
    os.replace(temporary, path)
    return tags


# ---------------------------------------------------------------- hand-annotated files

TAG_MARKER = "#"
"""The RepEval 2017 release writes every tag with a leading '#' (`#MODAL`); it is not part of the name."""


def _normalise_tag_name(name: str) -> str:
    """'#MODAL', 'word overlap' and 'QUANTITY/TIME REASONING' (the paper's spelling) → the names in TAGS."""
    return "_".join(name.strip().removeprefix(TAG_MARKER).strip().upper().split())


def _tag_names(field: str) -> list[str]:
    """The tag names in one tab-separated field: comma-separated, or several '#'-marked names in a row
    ('#MODAL #NEGATION'); an empty field (the release's trailing tab) holds none."""
    names = []
    for part in field.split(","):
        if part.count(TAG_MARKER) > 1:
            names.extend(piece for piece in part.split(TAG_MARKER) if piece.strip())
        elif part.strip():
            names.append(part)
    return names


def _check_tags(names: Iterable[str], where: str) -> frozenset[str]:
    tags = frozenset(_normalise_tag_name(name) for name in names if name.strip(f" \t{TAG_MARKER}"))
    unknown = sorted(tags - set(TAGS))
    if unknown:
        raise TagFileError(f"{where}: unknown tag(s) {', '.join(unknown)}; known tags: {', '.join(TAGS)}")
    return tags


def _json_record(record: object, where: str) -> tuple[str, frozenset[str]]:
    if not isinstance(record, dict) or "id" not in record or not isinstance(record.get("tags"), list):
        raise TagFileError(f'{where}: expected an object {{"id": ..., "tags": [...]}}; got {record!r:.80}')
    return str(record["id"]).strip(), _check_tags((str(t) for t in record["tags"]), where)


def read_tag_file(path: str | Path) -> dict[str, frozenset[str]]:
    """Hand-annotated tags: pair id → tags. Reads and checks the whole file (no spaCy, milliseconds),
    so a caller can validate it before any expensive work.

    Formats:
    - tab-separated lines `pair_id <TAB> TAG <TAB> TAG ...` as the RepEval 2017 MultiNLI annotation
      release writes them (`113976e<TAB>#BELIEF<TAB>#MODAL`; a pair without tags is `30824c<TAB>`),
      or `pair_id <TAB> TAG1,TAG2`. Tag names may carry the release's leading '#', any case, spaces
      for underscores (the paper's "WORD OVERLAP"); a pair id alone means no tags. Lines whose first
      character is '#' are comments, blank lines are skipped; CRLF endings and a UTF-8 BOM are fine.
    - a JSON list of {"id", "tags"} objects, or JSON lines of such objects.
    Unknown tag names, an empty pair id and a pair id given twice are errors naming the file and line.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TagFileError(f"{path}: cannot read tag file ({error.strerror or error})") from error
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise TagFileError(f"{path}, line {line}: not UTF-8 text ({error.reason}: the bytes "
                           f"{data[error.start:error.end]!r})", str(path), line) from None
    records: list[tuple[str, str, frozenset[str]]] = []  # (where, pair id, tags)
    if text.lstrip().startswith("["):
        try:
            loaded = load_json(text)
        except json.JSONDecodeError as error:
            raise TagFileError(f"{path}, line {error.lineno}: invalid JSON ({error.msg})") from error
        for position, record in enumerate(loaded, start=1):
            where = f"{path}, record {position}"
            records.append((where, *_json_record(record, where)))
    else:
        # Lines end at "\n" only (CRLF's "\r" is stripped), so numbers match what an editor shows even
        # when a tag or id holds another Unicode line break (str.splitlines would split there too).
        for number, raw in enumerate(text.split("\n"), start=1):
            raw = raw.removesuffix("\r")
            where = f"{path}, line {number}"
            line = raw.strip()
            if not line or raw.startswith(TAG_MARKER):
                continue
            if line.startswith("{"):
                try:
                    record = load_json(line)
                except json.JSONDecodeError as error:
                    raise TagFileError(f"{where}: invalid JSON ({error.msg})") from error
                records.append((where, *_json_record(record, where)))
                continue
            fields = raw.split("\t")
            pair_id = fields[0].strip()
            if not pair_id or pair_id.startswith(TAG_MARKER):
                raise TagFileError(f"{where}: expected `pair_id<TAB>#TAG<TAB>#TAG ...`; got {raw!r:.120}")
            names = [name for field in fields[1:] for name in _tag_names(field)]
            records.append((where, pair_id, _check_tags(names, where)))
    tags: dict[str, frozenset[str]] = {}
    for where, pair_id, pair_tags in records:
        if pair_id in tags:
            raise TagFileError(f"{where}: pair id {pair_id!r} is listed twice")
        tags[pair_id] = pair_tags
    return tags


def merge_tags(automatic: Mapping[str, frozenset[str]],
               manual: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Automatic tags with every hand-annotated pair's tags replacing the automatic ones."""
    merged = dict(automatic)
    merged.update(manual)
    return merged
