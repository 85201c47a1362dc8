"""Targeted augmentation (`train --augment KIND[,KIND…] [--augment-ratio R]`): edits of the training pairs,
made by the edit engine (`nlivis.analysis.edits`), added to every epoch — only edits whose label logic
fixes (the engine's `expectation == "label"`), never a guessed one.

Where the edits come from, for each training pair (P, H) with gold label L:
- the pair itself, its hypothesis ("h") or premise ("p") edited, or the two swapped ("x"): an antonym or
  exclusive co-hyponym of a word of an entailed hypothesis gives contradiction, a known hypernym of an
  upward noun keeps entailment, a negated entailed hypothesis contradicts, a neutral one stays neutral,
  a swapped contradiction is still one …, as the engine decides;
- the premise paired with itself ("s"): P entails P (a duplicate of itself, for paraphrase), so the copy's
  edits follow the same logic — "A man in a red shirt is sitting" / "A man in a blue shirt is sitting" is
  a contradiction, "… a man …" / "… a person …" an entailment (Breaking NLI's one-word pairs, Glockner et
  al. 2018, made with label logic instead of by hand).
- the premise's negated copy paired with itself ("n", NLI only): "A man is not driving a car" / "… a jeep" is an
  entailment, "… a vehicle" neutral — the downward position SNLI's positive premises never give (issue 29). Drawn
  only with `--augment-negated-share S`, each with its unnegated twin ("A man is driving a car" / "… a jeep",
  neutral), so that the negation and nothing else decides the label (`negated_twin_draw`).

What is filtered out, and why (counts per reason go into config.json):
- everything the edit engine's one rule set drops for every consumer (`nlivis.analysis.edit_filters`: words in
  compounds or joined by hyphens, lemmas that do not give the word back, verb and abstract-noun synonyms and
  hypernyms, replacements already in the sentence, mass nouns in a counted place, quantifiers without a whole
  clause, typos that spell a word …), counted under the engine's reasons;
- replacements the training split uses in fewer than `MIN_WORD_COUNT` distinct sentences (the engine's `known`,
  and every new word of an edit): WordNet's rare synonyms and hypernyms ("aerodrome", "canid") read like
  no caption; it also keeps the vocabulary — and so the shared word-vector file — the baseline's;
- edits whose label logic does not fix (augmentation trains on labels, never on a guess).

How many (`--augment-ratio R`): at most R × (the number of training pairs) augmented pairs, drawn once with
the run's seed and added to every epoch (the same set each epoch, so each has training dynamics over every
epoch like an original pair). The cap is shared evenly among the labels the asked kinds give — antonyms,
exclusive words, numbers and swaps only ever give contradiction, and an unbalanced set would move the
model's label prior — and each label's share evenly among the kinds that give it (a label or kind with
fewer candidates leaves its share to the others); within a kind the draw alternates between distinct word
changes (so "man → woman" does not crowd out rarer antonyms).

Cost: the candidate edits of the training split are made once (spaCy, WordNet) and cached (`augment/`, keyed by
the pairs, the engine's code and spaCy's pipeline). A later run (another kind, ratio or seed) only draws.
"""
from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import math
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from nlivis.analysis import edits as engine
from nlivis.analysis.edit_expectations import CONTRADICTION, ENTAILMENT, LABEL, NEUTRAL, TASK_LABELS
from nlivis.analysis.cues import CUES, cue_information, cue_values
from nlivis.analysis.edits import Edit, normalise_space, propose_edits
from nlivis.analysis.parsed import parse_sentences
from nlivis.analysis.self_pairs import (SELF_LABEL, hand_written_twin, left_out_of_augmentation, misread_main_verb,
                                       negated_copy, negated_self_pair_edits, repeated_word, self_pair_edits,
                                       self_pair_label)
from nlivis.data.records import Pair
from nlivis.features.cache import texts_digest
from nlivis.store.files import file_digest
from nlivis.features.spacy_pipeline import installed_pipeline_version
from nlivis.features.dataset import analyse_pairs
from nlivis.store.files import atomic_write_bytes, cache_root

AUGMENT_KINDS: dict[str, str] = {
    "antonym": "a word replaced by its WordNet antonym (standing → sitting, man → woman): contradiction from "
               "an entailed pair or from a premise paired with itself",
    "exclusive": "a word replaced by another of an exclusive category (red → blue, dog → cat, guitar → violin; "
                 "nlivis's lexicons): contradiction",
    "number": "a number changed (two → three): contradiction",
    "negation": "the main verb negated or its negation removed: an entailed hypothesis (or the premise paired with "
                "itself) becomes a contradiction, a neutral one stays neutral",
    "quantifier": "a subject's quantifier swapped (a → no, all → some …) where the quantifier lattice fixes the "
                  "label",
    "synonym": "a word replaced by a WordNet synonym of its dominant sense (big → large): the label stays",
    "hypernym": "a concrete noun replaced by its nearest WordNet hypernym the training data uses (dog → animal), "
                "where monotonicity fixes the label",
    "hyponym": "a concrete noun replaced by a WordNet hyponym (dog → puppy), where monotonicity fixes the label",
    "swap": "premise and hypothesis of a contradiction swapped: still a contradiction",
}
"""What `--augment` accepts, with the help text a form shows for each. The engine's name, gender and typo
edits keep a label too but are invariance edits; they are not offered here."""
DEFAULT_NEGATED_SHARE = 0.0
"""No pairs of the premises' negated copies unless asked (`--augment-negated-share`). Every shipped snli-small
augmented checkpoint uses 1 (README, "Negated copies with their twins"), but DIIN and AttentiveConvNet only at ratio
0.1 (at 0.35 and 0.25 they lose 11.7 and 5.2 points of SNLI dev), and a share of 0.6 brought ESAN's downward
regression back: the share and the ratio are chosen per family, so the default leaves the draw as it was."""
DEFAULT_AUGMENT_RATIO = 0.35
"""The ratio chosen on independent evidence for ESAN (README, "Issue 29: the ratio"): within 1.0 point of SNLI dev
against the compute-matched control on both seeds, where 0.5 and 1.0 were not; GCNN meets the same rule at it."""
MIN_WORD_COUNT = 3
"""A replacement (and every new word of an edit) must occur in this many distinct sentences of the training
split."""
SOURCES = {"h": "the pair's hypothesis edited", "p": "the pair's premise edited", "x": "the pair swapped",
           "s": "the premise paired with itself, its copy edited",
           "n": "the premise's negated copy paired with itself, one copy edited"}
ENGINE_MODULES = ("edits.py", "edit_filters.py", "edit_expectations.py", "word_replacements.py", "monotonicity.py",
                  "lexicons.py", "inflection.py", "parsed.py", "self_pairs.py", "near_synonyms.py")
POOL_FORMAT = "nlivis-augmentation-pool-4"
CHUNK = 256
"""Training pairs parsed together (spaCy's batch) while the candidates are made."""
WORD = re.compile(r"[\w'-]+")


@dataclass(frozen=True)
class Candidate:
    """One label-fixed edit of training pair number `original`."""

    original: int
    kind: str
    source: str
    """"h", "p", "x" or "s" (`SOURCES`)."""
    position: int
    """Token index of the change in the edited sentence (-1 for a swap)."""
    word: str
    replacement: str
    premise: str
    hypothesis: str
    label: str
    side: str
    """The edited side: "premise", "hypothesis" or "pair" (a swap)."""
    twin_only: bool = False
    """A hand-written self-pair neutral the draw uses only as a negated copy's twin (`self_pairs.TWIN_ONLY`)."""


@dataclass
class Pool:
    """Every label-fixed candidate of a training split that passed the filters, and what was filtered."""

    candidates: list[Candidate]
    filtered: dict[str, int]
    seconds: float = 0.0
    cached: bool = False


@dataclass
class Augmentation:
    """The augmented pairs of one run (analysed, in the order they join the training pairs) and their record."""

    items: list
    kinds: list[str]
    originals: list[int]
    """Per augmented pair: the index of the training pair it was made from."""
    record: dict
    timings: dict[str, float] = field(default_factory=dict)


# -------------------------------------------------------------------------------------------- kinds


def parse_kinds(text: str | Iterable[str]) -> tuple[str, ...]:
    """Kind names (a comma-separated string or a list) in `AUGMENT_KINDS` order, each once; ValueError
    naming the unknown ones and listing the known."""
    names = [k.strip() for k in (text.split(",") if isinstance(text, str) else text)]
    names = [k for k in names if k]
    if not names:
        raise ValueError(f"give at least one augmentation kind: {', '.join(AUGMENT_KINDS)}")
    unknown = [k for k in names if k not in AUGMENT_KINDS]
    if unknown:
        hint = (" (name, gender and typo edits are invariances, not label-fixing edits)"
                if set(unknown) & {"name", "gender", "typo"} else "")
        raise ValueError(f"unknown augmentation kind(s) {', '.join(map(repr, unknown))}{hint}; "
                         f"choose from {', '.join(AUGMENT_KINDS)}")
    return tuple(k for k in AUGMENT_KINDS if k in names)


def augment_choices() -> list[tuple[str, str]]:
    """(kind, help text) of every kind `--augment` accepts, for a form's options."""
    return list(AUGMENT_KINDS.items())


def kind_of(edit: Edit) -> str:
    """The augmentation kind of an engine edit: a substitution's relation, else the engine's kind."""
    return edit.change.relation if edit.kind == "substitution" else edit.kind


# -------------------------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class WordCounts:
    """How often a training split uses each lower-case token and each lemma."""

    tokens: Mapping[str, int]
    lemmas: Mapping[str, int]

    @classmethod
    def of(cls, items: Sequence) -> "WordCounts":
        """Counted once per distinct sentence (an SNLI premise stands in three pairs: one rare caption must
        not make its words look common)."""
        tokens: Counter = Counter()
        lemmas: Counter = Counter()
        seen: set[tuple[str, ...]] = set()
        for item in items:
            for sentence in (item.premise, item.hypothesis):
                if sentence.tokens in seen:
                    continue
                seen.add(sentence.tokens)
                tokens.update({token.lower() for token in sentence.tokens})
                lemmas.update({lemma.lower() for lemma in sentence.lemmas})
        return cls(tokens, lemmas)

    def known(self, min_count: int) -> frozenset[str]:
        """Tokens and lemmas used at least `min_count` times: the engine's `known` words (it looks lemmas up)."""
        return frozenset([*(w for w, c in self.tokens.items() if c >= min_count),
                          *(w for w, c in self.lemmas.items() if c >= min_count)])


def _new_words(edit: Edit, original: str) -> set[str]:
    edited = edit.hypothesis if edit.side != "premise" else edit.premise
    return {w.lower() for w in WORD.findall(edited)} - {w.lower() for w in WORD.findall(original)}


def edit_problem(kind: str, edit: Edit, label: str | None, original_text: str, counts: WordCounts,
                 min_count: int) -> str | None:
    """Why an engine edit (which passed the engine's own rules) is not used as a training pair, or None: its
    `label` is not fixed (None), or a new word is rare in the training split (see the module docstring)."""
    if label is None:
        return "label not fixed by logic"
    if kind == "swap":
        return None
    unknown = [w for w in _new_words(edit, original_text) if counts.tokens.get(w, 0) < min_count]
    if unknown:
        return "new word rare in the training split"
    return None


# ----------------------------------------------------------------------------------------- candidates


def _labelled_edits(premise: str, hypothesis: str, label: str, task: str, known: frozenset[str],
                    filtered: Counter) -> list[tuple[str, Edit, str | None, bool]]:
    """(source, edit, label, twin only) of every engine edit of the pair, of its premise paired with itself and of
    the premise's negated copy paired with itself (`analysis.self_pairs`), the label the one logic fixes (None
    where it fixes none); the self-pair labels augmentation leaves out (`self_pairs.left_out_of_augmentation`) are
    counted in `filtered` under why, and the hand-written neutrals kept for the twins are marked twin only."""
    engine_kinds = tuple(AUGMENT_KINDS)
    labelled = [({"hypothesis": "h", "premise": "p", "pair": "x"}[edit.side], edit,
                 edit.expected if edit.expectation == LABEL else None, False)
                for edit in propose_edits(premise, hypothesis, label, task, engine_kinds, known, filtered)]
    for source, self_pairs in (("s", self_pair_edits(premise, task, engine_kinds, known, filtered)),
                               ("n", negated_self_pair_edits(premise, task, engine_kinds, known, filtered))):
        for edit, fixed in self_pairs:
            why = left_out_of_augmentation(edit, fixed, premise, negated_copy=source == "n")
            if why:
                filtered[why] += 1
            else:
                labelled.append((source, edit, fixed, source == "s" and hand_written_twin(edit, fixed, premise)))
    return labelled


def candidates_of(index: int, premise: str, hypothesis: str, label: str, task: str, known: frozenset[str],
                  counts: WordCounts, min_count: int, filtered: Counter) -> list[Candidate]:
    """The label-fixed candidates of one training pair (itself and its premise paired with itself, either
    side edited) that pass the filters; `filtered` counts the others by reason."""
    found: list[Candidate] = []
    for source, edit, fixed, twin_only in _labelled_edits(premise, hypothesis, label, task, known, filtered):
        kind = kind_of(edit)
        if kind not in AUGMENT_KINDS:
            continue
        original_text = hypothesis if source == "h" else premise
        problem = edit_problem(kind, edit, fixed, original_text, counts, min_count)
        if problem:
            filtered[problem] += 1
            continue
        positions = edit.change.premise_positions or edit.change.hypothesis_positions
        found.append(Candidate(index, kind, source, positions[0] if positions else -1, edit.change.word,
                               edit.change.replacement, edit.premise, edit.hypothesis, fixed, edit.side, twin_only))
    return found


def build_pool(pairs: Sequence, task: str, counts: WordCounts, min_count: int = MIN_WORD_COUNT,
               progress: Callable[[str], None] = lambda message: None) -> Pool:
    """Every filtered, label-fixed candidate of the training pairs (`data.records.Pair`s with labels)."""
    known = counts.known(min_count)
    start = time.perf_counter()
    filtered: Counter = Counter()
    candidates: list[Candidate] = []
    reported = 0
    for first in range(0, len(pairs), CHUNK):
        chunk = pairs[first:first + CHUNK]
        parse_sentences([normalise_space(text) for pair in chunk for text in (pair.premise, pair.hypothesis)])
        for offset, pair in enumerate(chunk):
            candidates += candidates_of(first + offset, pair.premise, pair.hypothesis, pair.label, task, known,
                                        counts, min_count, filtered)
        done = min(first + CHUNK, len(pairs))
        if done == len(pairs) or done - reported >= len(pairs) / 20:
            reported = done
            progress(f"augment: edits of {done:,} of {len(pairs):,} training pairs made "
                     f"({len(candidates):,} label-fixed candidates, {time.perf_counter() - start:.0f} s)")
    return Pool(candidates, dict(sorted(filtered.items())), time.perf_counter() - start)


def pool_cache_path(pairs: Sequence, task: str, min_count: int, cache_dir: str | Path | None = None) -> Path:
    """Where the pool of these training pairs is kept: keyed by the pairs (ids, texts, labels), the task, the
    word-count threshold, the engine's and this module's code and spaCy's pipeline."""
    content = texts_digest((p.id, p.premise, p.hypothesis + "\t" + str(p.label)) for p in pairs)
    code = file_digest(Path(engine.__file__).with_name(name) for name in ENGINE_MODULES)
    key = json.dumps([POOL_FORMAT, task, min_count, content, code, candidate_rules_digest(),
                      installed_pipeline_version()])
    return cache_root(cache_dir) / "augment" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json.gz"


def candidate_rules_digest() -> str:
    """sha256 of the code and constants that decide which candidates a pool holds (this module's filters),
    so that editing the draw or the docs here keeps the cache, and changing a rule does not."""
    rules = [WordCounts, _new_words, edit_problem, self_pair_label, self_pair_edits, repeated_word, misread_main_verb,
             negated_copy, negated_self_pair_edits, left_out_of_augmentation, hand_written_twin, _labelled_edits,
             candidates_of, build_pool, kind_of]
    constants = [sorted(AUGMENT_KINDS), SELF_LABEL, CHUNK, WORD.pattern]
    text = "".join(inspect.getsource(rule) for rule in rules) + json.dumps(constants)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_pool(pairs: Sequence, task: str, counts: WordCounts, min_count: int = MIN_WORD_COUNT,
              cache_dir: str | Path | None = None, progress: Callable[[str], None] = lambda message: None) -> Pool:
    """`build_pool`, read from the cache when these pairs were augmented before by the same code."""
    path = pool_cache_path(pairs, task, min_count, cache_dir)
    start = time.perf_counter()
    if path.is_file():
        try:
            data = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
            if data.get("format") != POOL_FORMAT:
                raise ValueError("another format")
            pool = Pool([Candidate(**c) for c in data["candidates"]], data["filtered"],
                        time.perf_counter() - start, cached=True)
            progress(f"augment: {len(pool.candidates):,} candidate edits read from {path}")
            return pool
        except (OSError, ValueError, KeyError, TypeError, EOFError) as error:
            progress(f"augment: cached candidates {path} unreadable ({error}); making them again")
    progress(f"augment: making the candidate edits of {len(pairs):,} training pairs (spaCy's parser and WordNet, "
             "once; later runs read them from the cache)")
    pool = build_pool(pairs, task, counts, min_count, progress)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"format": POOL_FORMAT, "candidates": [asdict(c) for c in pool.candidates],
                   "filtered": pool.filtered}
        atomic_write_bytes(path, gzip.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8"), mtime=0))
    except OSError as error:
        progress(f"augment: could not keep the candidates in {path.parent} ({error}); they are used uncached")
    return pool


# ------------------------------------------------------------------------------------------ the draw


def _spread(candidates: Sequence[Candidate], rng: random.Random) -> list[Candidate]:
    """Candidates in an order that alternates between distinct word changes (each change's candidates
    shuffled, the changes in a shuffled order), so any prefix is as varied as the candidates allow."""
    by_change: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        by_change[(candidate.word.lower(), candidate.replacement.lower())].append(candidate)
    groups = [by_change[change] for change in sorted(by_change)]
    for group in groups:
        rng.shuffle(group)
    rng.shuffle(groups)
    order = []
    for depth in range(max((len(g) for g in groups), default=0)):
        order += [group[depth] for group in groups if depth < len(group)]
    return order


def shares(available: Mapping[str, int], cap: int) -> dict[str, int]:
    """The cap split evenly among the kinds; a kind with fewer candidates than its share takes them all and
    leaves the rest to the others (water-filling). Remainders go to the kinds in order."""
    share = {kind: 0 for kind in available}
    left, open_kinds = cap, [k for k in available if available[k] > 0]
    while left > 0 and open_kinds:
        each = max(1, left // len(open_kinds))
        for kind in list(open_kinds):
            take = min(each, available[kind] - share[kind], left)
            share[kind] += take
            left -= take
            if share[kind] >= available[kind]:
                open_kinds.remove(kind)
            if left == 0:
                break
    return share


def _unique_candidates(pool: Pool, kinds: Sequence[str],
                       existing: Iterable[tuple[str, str]]) -> tuple[list[Candidate], dict[str, int]]:
    """The pool's candidates of the asked kinds, each new pair once and none equal to a training pair, and how
    many each kind has."""
    seen = set(existing)
    unique = []
    available = {kind: 0 for kind in kinds}
    for candidate in pool.candidates:
        if candidate.kind in available and (candidate.premise, candidate.hypothesis) not in seen:
            seen.add((candidate.premise, candidate.hypothesis))
            unique.append(candidate)
            available[candidate.kind] += 1
    return unique, available


def _by_kind(candidates: Iterable[Candidate], kinds: Sequence[str]) -> dict[str, list[Candidate]]:
    found: dict[str, list[Candidate]] = {kind: [] for kind in kinds}
    for candidate in candidates:
        found[candidate.kind].append(candidate)
    return found


def _take(candidates: Iterable[Candidate], kinds: Sequence[str], count: int, key: str) -> list[Candidate]:
    """`count` candidates shared evenly among the kinds (`shares`), each kind's in `_spread` order seeded by
    `key`."""
    found = _by_kind(candidates, kinds)
    chosen: list[Candidate] = []
    for kind, take in shares({kind: len(found[kind]) for kind in kinds}, count).items():
        chosen += _spread(found[kind], random.Random(f"{key}:{kind}"))[:take]
    return chosen


def label_balanced_draw(pool: Pool, kinds: Sequence[str], ratio: float, train_count: int, seed: int,
                        existing: Iterable[tuple[str, str]] = ()) -> list[Candidate]:
    """The draw the first augmented checkpoints were trained with, kept as the "before" of the record's
    mutual information: the cap shared evenly among the labels, each label's share among the kinds, blind to
    the cues — so one-word edits were mostly contradictions."""
    unique = [c for c in _unique_candidates(pool, kinds, existing)[0] if outside_twins(c)]
    by_label: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in unique:
        by_label[candidate.label].append(candidate)
    label_shares = shares({label: len(found) for label, found in sorted(by_label.items())},
                          math.floor(ratio * train_count))
    return [c for label, take in label_shares.items() for c in _take(by_label[label], kinds, take, f"{seed}:{label}")]


def outside_twins(candidate: Candidate) -> bool:
    """Whether a candidate is drawn on its own: neither a negated copy's pair nor a twin-only neutral, both of
    which only `negated_twin_draw` draws."""
    return candidate.source != "n" and not candidate.twin_only


def cue_stratum(candidate: Candidate) -> tuple[str, ...]:
    """The values of every surface cue (`analysis.cues.CUES`) of a candidate pair."""
    return tuple(cue_values(candidate.premise, candidate.hypothesis).values())


def draw(pool: Pool, kinds: Sequence[str], ratio: float, train_count: int, seed: int,
         existing: Iterable[tuple[str, str]] = (), negated_share: float = 0.0, exclusive_twins: bool = False
         ) -> tuple[list[Candidate], dict[str, int]]:
    """The augmented pairs of a run: at most floor(ratio × train_count), each new pair once and none equal to
    a training pair, balanced within every cue stratum (`cue_stratum`: words changed × negation side), so
    that no cue carries information about the label: each stratum gives every label the asked kinds give the
    same number of pairs — the smallest label's count there, all scaled down alike to the cap —, a stratum
    lacking a label gives none (a one-word contradiction comes with a one-word entailment and a one-word
    neutral, drawn from the same pairs' edits). Within a (stratum, label) the kinds share evenly (`shares`),
    each drawn in `_spread` order. `negated_share` of each label's pairs come from the premises' negated copies
    with their unnegated twins (`negated_twin_draw`, with `exclusive_twins` its exclusive-object units), the rest
    from every other candidate not drawn there. Returns the pairs and the candidates per kind."""
    cap = math.floor(ratio * train_count)
    unique, available = _unique_candidates(pool, kinds, existing)
    labels = sorted({c.label for c in unique})
    per_label = cap // len(labels) if labels else 0
    chosen = negated_twin_draw(unique, kinds, math.floor(negated_share * per_label / 2), seed, exclusive_twins)
    drawn = set(chosen)
    rest = [c for c in unique if outside_twins(c) and c not in drawn]
    return chosen + balanced_draw(rest, labels, kinds, per_label - len(chosen) // max(1, len(labels)), seed), available


CONTRADICTING_TWINS = (CONTRADICTION, CONTRADICTION)
"""(negated copy's label, its twin's label) of a number swap: it contradicts with or without the negation."""
MIRRORED_TWINS = ((ENTAILMENT, NEUTRAL), (NEUTRAL, ENTAILMENT))
"""Twins where the negation decides: a hyponym in the negation's scope is entailed, neutral without it ("… not
driving a car" / "… not driving a jeep" against "… driving a car" / "… driving a jeep"), a hypernym the other way
round."""
PARALLEL_TWINS = ((ENTAILMENT, ENTAILMENT), (NEUTRAL, NEUTRAL))
"""Twins where it does not: a word outside the negation's scope (the subject of "A man is not driving", upward in
both) or a synonym keeps its label."""
EXCLUSIVE_TWINS = (NEUTRAL, CONTRADICTION)
"""Twins where the negation decides a word swap: the object swapped for an exclusive one is neutral under the
negation and contradicts without it ("… not playing a guitar" / "… not playing a violin" against "… playing a
guitar" / "… playing a violin"; `self_pairs.exclusive_in_scope`)."""


def negated_twins(candidates: Iterable[Candidate]) -> list[tuple[Candidate, Candidate]]:
    """Each negated copy's candidate (source "n") with its unnegated twin: the candidate of the same training pair's
    premise paired with itself (source "s") that replaces the same word by the same word on the same side ("A man
    is not driving a car" / "… a jeep", entailment; "A man is driving a car" / "… a jeep", neutral). A twin serves
    one negated candidate."""
    def key(candidate: Candidate) -> tuple:
        return (candidate.original, candidate.kind, candidate.side, candidate.word.lower(),
                candidate.replacement.lower())

    candidates = list(candidates)
    twins = {key(c): c for c in candidates if c.source == "s"}
    found, used = [], set()
    for candidate in candidates:
        twin = twins.get(key(candidate)) if candidate.source == "n" else None
        if twin is not None and key(twin) not in used:
            used.add(key(twin))
            found.append((candidate, twin))
    return found


@dataclass(frozen=True)
class TwinTakes:
    """Units of each type one group of twins gives (`negated_twin_draw`): `mirrored` of each `MIRRORED_TWINS`
    type, `exclusive` `EXCLUSIVE_TWINS` units, `parallel` of each `PARALLEL_TWINS` type; besides, mirrored +
    parallel + exclusive number swaps, of which `exclusive` give their negated pair alone, one more (entailment,
    entailment) unit per exclusive one, and `exclusive` (neutral, neutral) units that give their twin alone."""

    mirrored: int
    exclusive: int
    parallel: int

    @property
    def per_label(self) -> int:
        """Pairs of each label on each side (negated and twins)."""
        return self.mirrored + self.exclusive + self.parallel

    def counts(self) -> dict[tuple[str, str], int]:
        """Units taken of each type, halves included."""
        return {CONTRADICTING_TWINS: self.per_label, MIRRORED_TWINS[0]: self.mirrored,
                MIRRORED_TWINS[1]: self.mirrored, EXCLUSIVE_TWINS: self.exclusive,
                PARALLEL_TWINS[0]: self.parallel + self.exclusive, PARALLEL_TWINS[1]: self.parallel + self.exclusive}

    @classmethod
    def most(cls, supply: Mapping[tuple[str, str], int], exclusive_twins: bool) -> TwinTakes:
        """The most a group's `supply` (units per type) balances: mirrored first, then exclusive, then parallel."""
        numbers = supply.get(CONTRADICTING_TWINS, 0)
        mirrored = min(numbers, *(supply.get(types, 0) for types in MIRRORED_TWINS))
        exclusive = min(supply.get(EXCLUSIVE_TWINS, 0), numbers - mirrored,
                        *(supply.get(types, 0) for types in PARALLEL_TWINS)) if exclusive_twins else 0
        parallel = min(numbers - mirrored - exclusive, *(supply.get(types, 0) - exclusive for types in PARALLEL_TWINS))
        return cls(mirrored, exclusive, parallel)

    def within(self, per_label: int) -> TwinTakes:
        """These takes cut to `per_label` pairs a label and side, in the same order of precedence."""
        mirrored = min(self.mirrored, per_label)
        exclusive = min(self.exclusive, per_label - mirrored)
        return TwinTakes(mirrored, exclusive, per_label - mirrored - exclusive)


def negated_twin_draw(candidates: Sequence[Candidate], kinds: Sequence[str], per_label_units: int,
                      seed: int, exclusive_twins: bool = False) -> list[Candidate]:
    """Negated copies' candidates, each followed by its twin (`negated_twins`), at most `per_label_units` pairs of
    pairs a label: every label then gets the same number of pairs in every cue stratum on both sides (the negated
    pairs' strata and the twins'), so the words changed and the negation side still say nothing about the label.
    Within a stratum, k number swaps (`CONTRADICTING_TWINS`) come with m of each `MIRRORED_TWINS` type, as many as
    there are, and k − m of each `PARALLEL_TWINS` type: the only balance of the five types (the negated side's and
    the twins' entailments are equal only when the two mirrored types are), the mirrored ones first because only
    they show that the negation decides. With `exclusive_twins`, j `EXCLUSIVE_TWINS` units come next: they add a
    neutral on the negated side and a contradiction on the twins', which no pairing evens out, so j more number
    swaps give their negated pair alone, j more (neutral, neutral) units their twin alone, and j more (entailment,
    entailment) units both (`TwinTakes`)."""
    if per_label_units <= 0:
        return []
    groups: dict[tuple, dict[tuple[str, str], list[Candidate]]] = defaultdict(lambda: defaultdict(list))
    twin_of: dict[Candidate, Candidate] = {}
    for negated, twin in negated_twins(candidates):
        groups[(cue_stratum(negated), cue_stratum(twin))][(negated.label, twin.label)].append(negated)
        twin_of[negated] = twin
    most = {group: TwinTakes.most({types: len(found[types]) for types in found}, exclusive_twins)
            for group, found in groups.items()}
    takes = stratum_takes({group: most[group].per_label for group in groups}, per_label_units)
    chosen: list[Candidate] = []
    for group in sorted(groups):
        group_takes = most[group].within(takes[group])
        for types, count in group_takes.counts().items():
            key = f"{seed}:twins:{'/'.join(types)}:{'/'.join(group[0] + group[1])}"
            taken = _take(groups[group][types], kinds, count, key)
            halves = group_takes.exclusive if types in (CONTRADICTING_TWINS, PARALLEL_TWINS[1]) else 0
            paired, alone = taken[:len(taken) - halves], taken[len(taken) - halves:]
            chosen += [pair for negated in paired for pair in (negated, twin_of[negated])]
            chosen += alone if types == CONTRADICTING_TWINS else [twin_of[negated] for negated in alone]
    return chosen


def balanced_draw(candidates: Sequence[Candidate], labels: Sequence[str], kinds: Sequence[str], per_label: int,
                  seed: int) -> list[Candidate]:
    """At most `per_label` candidates of each label, the same number of each label in every cue stratum (see
    `draw`)."""
    strata: dict[tuple[str, ...], dict[str, list[Candidate]]] = defaultdict(lambda: {label: [] for label in labels})
    for candidate in candidates:
        strata[cue_stratum(candidate)][candidate.label].append(candidate)
    takes = stratum_takes({stratum: min(map(len, found.values())) for stratum, found in strata.items()}, per_label)
    chosen: list[Candidate] = []
    for stratum in sorted(strata):
        for label in labels:
            chosen += _take(strata[stratum][label], kinds, takes[stratum], f"{seed}:{label}:{'/'.join(stratum)}")
    return chosen


def stratum_takes(balanced: Mapping[tuple[str, ...], int], per_label: int) -> dict[tuple[str, ...], int]:
    """How many pairs of each label every stratum gives: all it can balance (`balanced`), or, when that is more
    than `per_label` in all, each stratum's count scaled down alike, the remainder going one by one to the
    strata with the largest fractions cut (ties in stratum order)."""
    total = sum(balanced.values())
    if total <= per_label:
        return dict(balanced)
    exact = {stratum: count * per_label / total for stratum, count in balanced.items()}
    takes = {stratum: math.floor(value) for stratum, value in exact.items()}
    by_fraction = sorted(exact, key=lambda stratum: (takes[stratum] - exact[stratum], stratum))
    for stratum in by_fraction[:per_label - sum(takes.values())]:
        takes[stratum] += 1
    return takes


def augmented_id(original_id: str, candidate: Candidate) -> str:
    """`<original id>~<kind>~<source><position>`: where the pair came from, readable in any listing."""
    return f"{original_id}~{candidate.kind}~{candidate.source}{candidate.position}"


def unique_ids(ids: Sequence[str]) -> list[str]:
    """Ids with a second, third … occurrence suffixed `.2`, `.3` (two quantifier swaps at one position)."""
    seen: Counter = Counter()
    unique = []
    for value in ids:
        seen[value] += 1
        unique.append(value if seen[value] == 1 else f"{value}.{seen[value]}")
    return unique


def cue_record(pairs: Sequence[Pair], before: Sequence[Candidate], chosen: Sequence[Candidate]) -> dict:
    """I(cue; label) in bits (`analysis.cues`) of the training pairs, of the augmented pairs the cue-blind draw
    would have added (`label_balanced_draw`, the first augmented checkpoints' rule) and of those this draw
    added, and of the whole epoch (training + added pairs) after."""
    originals = [((p.premise, p.hypothesis), p.label) for p in pairs]
    added = [((c.premise, c.hypothesis), c.label) for c in chosen]

    def information(rows: Sequence[tuple[tuple[str, str], str]]) -> dict[str, float]:
        return cue_information([texts for texts, _ in rows], [label for _, label in rows])

    return {"cues": dict(CUES), "unit": "bits",
            "training_pairs": information(originals),
            "added_before": information([((c.premise, c.hypothesis), c.label) for c in before]),
            "added_after": information(added),
            "epoch_after": information(originals + added)}


def augmentation_record(kinds: Sequence[str], ratio: float, seed: int, train_count: int, chosen: Sequence[Candidate],
                        available: Mapping[str, int], pool: Pool, min_count: int, information: dict,
                        negated_share: float = 0.0, exclusive_twins: bool = False) -> dict:
    """What config.json says about a run's augmentation (`information`: `cue_record`'s)."""
    return {
        "kinds": list(kinds), "ratio": ratio, "seed": seed, "negated_share": negated_share,
        "negated_twins": sum(c.source == "n" for c in chosen), "exclusive_twins": exclusive_twins,
        "relative_to": "training pairs: at most ratio × training pairs are added, drawn once and trained on in "
                       "every epoch",
        "balance": "within every cue stratum (words changed × negation side) each label gets the same number of "
                   "pairs, so no cue carries information about the label (mutual_information.added_after)",
        "cap": math.floor(ratio * train_count), "pairs": len(chosen),
        "added": {kind: sum(c.kind == kind for c in chosen) for kind in kinds},
        "candidates": dict(available),
        "by_label": dict(sorted(Counter(c.label for c in chosen).items())),
        "by_source": {SOURCES[s]: n for s, n in sorted(Counter(c.source for c in chosen).items())},
        "mutual_information": information,
        "filtered_out": pool.filtered,
        "min_word_count": min_count,
        "id_format": "<original id>~<kind>~<source><token position>; sources: "
                     + ", ".join(f"{k} = {v}" for k, v in SOURCES.items()),
    }


def task_of_labels(labels: Sequence[str]) -> str:
    for task, task_labels in TASK_LABELS.items():
        if tuple(labels) == task_labels:
            return task
    raise ValueError(f"augmentation needs NLI or paraphrase labels; this protocol's are {list(labels)}")


def augment_training(train_items: Sequence, labels: Sequence[str], kinds: Sequence[str], ratio: float, seed: int,
                     cache_dir: str | Path | None = None, progress: Callable[[str], None] = lambda message: None,
                     min_count: int | None = None, negated_share: float = 0.0, exclusive_twins: bool = False
                     ) -> Augmentation:
    """The augmented pairs of a run over `train_items` (analysed training pairs): candidates (cached), the seeded
    draw (`negated_share`, `exclusive_twins`: see `draw`), and the chosen pairs analysed (feature cache).
    `min_count`: `MIN_WORD_COUNT` unless given."""
    min_count = MIN_WORD_COUNT if min_count is None else min_count
    task = task_of_labels(labels)
    pairs = [item.pair for item in train_items]
    counts = WordCounts.of(train_items)
    pool = load_pool(pairs, task, counts, min_count, cache_dir, progress)
    start = time.perf_counter()
    chosen, available = draw(pool, kinds, ratio, len(pairs), seed, ((p.premise, p.hypothesis) for p in pairs),
                             negated_share, exclusive_twins)
    ids = unique_ids([augmented_id(pairs[c.original].id, c) for c in chosen])
    records = [Pair(id=i, premise=c.premise, hypothesis=c.hypothesis, label=c.label) for i, c in zip(ids, chosen)]
    drawn = time.perf_counter() - start
    progress(f"augment: {len(records):,} pairs added to every epoch "
             f"({', '.join(f'{k} {sum(c.kind == k for c in chosen):,}' for k in kinds)}); analysing them")
    start = time.perf_counter()
    items = analyse_pairs(records, cache_dir=cache_dir, progress=False)
    before = label_balanced_draw(pool, kinds, ratio, len(pairs), seed, ((p.premise, p.hypothesis) for p in pairs))
    record = augmentation_record(kinds, ratio, seed, len(pairs), chosen, available, pool, min_count,
                                 cue_record(pairs, before, chosen), negated_share, exclusive_twins)
    return Augmentation(items, [c.kind for c in chosen], [c.original for c in chosen], record,
                        {"candidates_s": pool.seconds, "candidates_cached": float(pool.cached), "draw_s": drawn,
                         "analysis_s": time.perf_counter() - start})


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
