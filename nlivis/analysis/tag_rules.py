"""The rules behind the automatic MultiNLI tags (`analysis.tags`): DIIN section 4.6's thresholds and word lists,
and one cue per tag over a pair's spaCy tokens (whole tokens and lemmas, dependencies, PTB tags) and WordNet.

`rule_tags` applies them to one parsed pair; `analysis.tags` says what each rule decides (`TAG_METHODS`), how
well it agrees with the annotators, and tags whole splits with a cache. A rule change bumps
`tags.TAGGER_VERSION`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from nlivis.features.wordnet import load_wordnet

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


def rule_tags(premise_doc, hypothesis_doc, use_wordnet: bool) -> set[str]:
    """The tags the rules find in one pair of spaCy Docs (parser on); `use_wordnet` False leaves out the tags
    whose rule needs WordNet (`tags.WORDNET_TAGS`)."""
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
