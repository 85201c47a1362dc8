"""Sentences as spaCy parses them (tokens, lemmas, tags, dependencies), frozen and remembered per text.

The edit engine reads a sentence's parse to find its main verb, negations, determiners and the scope of
each operator; a parse is plain data here, so the rules are testable without spaCy and a sentence seen
before (the original pair of every edit, the dev sentences of a probe) is parsed once per process.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

from nlivis.analysis import lexicons
from nlivis.features.spacy_pipeline import load_nlp

PARSES_REMEMBERED = 20_000
"""Distinct sentences whose parse is kept (a probe suite parses a few thousand dev sentences)."""
PARSE_BATCH_SIZE = 256


@dataclass(frozen=True)
class Word:
    """One spaCy token: `ws` is the whitespace after it, `head` the index of its head (its own for the root)."""

    i: int
    text: str
    ws: str
    lemma: str
    pos: str
    tag: str
    dep: str
    head: int
    entity: str = ""
    """spaCy's named-entity type ("PERSON", "ORG" …), "" outside an entity and in a sentence the recogniser did not
    read (one without a name of `ENTITY_TRIGGERS`)."""
    entity_start: bool = False
    """Whether the word begins its entity (spaCy's IOB "B")."""

    @property
    def lower(self) -> str:
        return self.text.lower()


@dataclass(frozen=True)
class ParsedSentence:
    text: str
    words: tuple[Word, ...]

    def __len__(self) -> int:
        return len(self.words)

    @cached_property
    def _children(self) -> tuple[tuple[int, ...], ...]:
        children: list[list[int]] = [[] for _ in self.words]
        for word in self.words:
            if word.head != word.i:
                children[word.head].append(word.i)
        return tuple(tuple(c) for c in children)

    def children(self, i: int) -> tuple[int, ...]:
        return self._children[i]

    def subtree(self, i: int) -> frozenset[int]:
        """`i` and everything below it."""
        seen, stack = {i}, [i]
        while stack:
            for child in self._children[stack.pop()]:
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return frozenset(seen)

    @property
    def root(self) -> int | None:
        """The first root of the parse (a sentence fragment may have several sentences)."""
        return next((w.i for w in self.words if w.head == w.i), None)

    def with_words(self, replaced: dict[int, str], inserted: dict[int, str] | None = None,
                   removed: frozenset[int] = frozenset()) -> str:
        """The sentence's text with words replaced (index → text), inserted before an index (index → text,
        followed by a space) and removed (a removed word's trailing space goes to the word before it when that
        one had none: "is" + "n't " → "is ")."""
        inserted = inserted or {}
        pieces: list[str] = []
        for word in self.words:
            if word.i in inserted:
                pieces.append(inserted[word.i] + " ")
            if word.i in removed:
                if word.ws and pieces and not pieces[-1].endswith(" "):
                    pieces[-1] += word.ws  # "is" + "n't " → "is "
                continue
            pieces.append(replaced.get(word.i, word.text) + word.ws)
        return "".join(pieces).strip()


def _from_doc(doc) -> ParsedSentence:
    kept = [token for token in doc if not token.is_space]
    index = {token.i: position for position, token in enumerate(kept)}
    words = []
    for position, token in enumerate(kept):
        whitespace = token.whitespace_
        if position + 1 < len(kept) and kept[position + 1].i != token.i + 1:
            whitespace = " "  # a whitespace token was dropped after this one
        words.append(Word(position, token.text, whitespace, token.lemma_, token.pos_, token.tag_, token.dep_,
                          index.get(token.head.i, position), token.ent_type_, token.ent_iob_ == "B"))
    return ParsedSentence(doc.text, tuple(words))


_REMEMBERED: OrderedDict[str, ParsedSentence] = OrderedDict()


ENTITY_TRIGGERS = frozenset(lexicons.MALE_NAMES + lexicons.FEMALE_NAMES)
"""The words whose sentences the entity recogniser reads: entities are asked for only of a given name of nlivis's
lexicon (`edits.person_name`), so the recogniser (its own tok2vec: as costly as tagger and parser together) runs
only where one of them is a token — 19 of the 1,447 dev sentences a probe suite parses."""


def _recognise_entities(nlp, docs: list) -> None:
    """spaCy's entity recogniser (loaded but switched off for token features) over the `docs` holding one of the
    `ENTITY_TRIGGERS`, in place; the others keep no entities."""
    if "ner" not in nlp.component_names:
        return
    asked = [doc for doc in docs if any(token.text in ENTITY_TRIGGERS for token in doc)]
    for _ in nlp.get_pipe("ner").pipe(asked, batch_size=PARSE_BATCH_SIZE):
        pass  # annotates each doc in place


def parse_sentences(texts: Sequence[str]) -> list[ParsedSentence]:
    """The parse of each text (spaCy with the dependency parser, once per distinct text per process), with the
    entities of the sentences that hold a given name (`ENTITY_TRIGGERS`): the edit engine changes a name only
    where spaCy sees a person."""
    found = {text: _REMEMBERED[text] for text in texts if text in _REMEMBERED}
    for text in found:
        _REMEMBERED.move_to_end(text)  # used now: the last to be forgotten
    missing = list(dict.fromkeys(text for text in texts if text not in found))
    if missing:
        nlp = load_nlp(with_parser=True)
        docs = list(nlp.pipe(missing, batch_size=PARSE_BATCH_SIZE))
        _recognise_entities(nlp, docs)
        for text, doc in zip(missing, docs):
            found[text] = _REMEMBERED[text] = _from_doc(doc)
            if len(_REMEMBERED) > PARSES_REMEMBERED:
                _REMEMBERED.popitem(last=False)  # may be one of these texts when they outnumber the memory
    return [found[text] for text in texts]
