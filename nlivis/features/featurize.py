"""Analysed pairs → `Batch` tensors: word ids, masks, char ids, POS ids, exact-match flags, labels.

Cut-offs are hard, as in the papers: a sentence longer than its maximum keeps its first tokens and
loses the rest (DIIN "crops" the same way). Exact match is computed on the kept tokens only, so a
word that survives only in the cut tail never flags a token. Padding is on the right; a batch is as
long as its longest (cut) sentence, or exactly the cut-offs with `pad_to_cutoff` (DIIN's flatten
needs a fixed P × H). A sentence with no tokens at all (an empty line in a data file) is represented
by one UNK token, so no row of a mask is all False and masked softmaxes stay defined.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from nlivis.data.records import Pair
from nlivis.features.dataset import AnalysedPair
from nlivis.features.sentences import SentenceAnalysis, analyse_text_pair
from nlivis.features.batch import Batch
from nlivis.features.chars import PAD_ID, UNK_ID
from nlivis.features.exact_match import exact_match_flags
from nlivis.features.pos import pos_index
from nlivis.features.settings import FeatureSettings, Truncation
from nlivis.features.vocab import CharVocabulary, Vocabulary
from nlivis.features.wordpieces import PAD_PIECE, UNK_PIECE, WordPieces

EMPTY_SENTENCE_TOKEN = ""
"""Token string shown for the single UNK position standing in for an empty sentence."""


@dataclass(frozen=True)
class EncodedText:
    """`Featurizer.encode_text_reported` result: the one-pair batch and what the cut-offs removed."""

    batch: Batch
    truncation: Truncation


class Featurizer:
    """Turns analysed pairs into `Batch`es with one vocabulary, char vocabulary, settings and label set.

    `labels` is the label order of the model's logits (e.g. `data.records.NLI_LABELS`). `pieces` is the
    word-piece tokeniser where `settings.word_pieces` asks for pieces (default: MiniLM's `vocab.txt`).
    """

    def __init__(self, vocab: Vocabulary, char_vocab: CharVocabulary, settings: FeatureSettings,
                 labels: Sequence[str], pieces: WordPieces | None = None):
        self.vocab = vocab
        self.char_vocab = char_vocab
        self.settings = settings
        self.labels = tuple(labels)
        self.label_index = {label: i for i, label in enumerate(self.labels)}
        self._char_cache: dict[str, list[int]] = {}
        self.pieces = (pieces or WordPieces.minilm()) if settings.word_pieces else None

    def _label_ids(self, items: Sequence) -> torch.Tensor | None:
        if any(item.pair.label is None for item in items):
            return None
        ids = []
        for item in items:
            if item.pair.label not in self.label_index:
                where = f" ({item.pair.source}, line {item.pair.line})" if item.pair.source else ""
                raise ValueError(f"pair {item.pair.id}{where}: label {item.pair.label!r} is not one of "
                                 f"this model's labels {self.labels}")
            ids.append(self.label_index[item.pair.label])
        return torch.tensor(ids, dtype=torch.long)

    def encode(self, items: Sequence) -> Batch:
        """A `Batch` for `items` (`AnalysedPair`s), in order; labels None if any pair has none."""
        if not items:
            raise ValueError("cannot encode an empty list of pairs")
        s = self.settings
        premises = [cut_sentence(item.premise, s.max_premise_len) for item in items]
        hypotheses = [cut_sentence(item.hypothesis, s.max_hypothesis_len) for item in items]
        flags = [exact_match_flags(p.tokens, p.lemmas, h.tokens, h.lemmas, s.exact_match_rule)
                 for p, h in zip(premises, hypotheses)]
        p_len = s.max_premise_len if s.pad_to_cutoff else max(1, *(len(p) for p in premises))
        h_len = s.max_hypothesis_len if s.pad_to_cutoff else max(1, *(len(h) for h in hypotheses))
        p_ids, p_mask, p_chars, p_pos, p_em = self._side(premises, [f[0] for f in flags], p_len)
        h_ids, h_mask, h_chars, h_pos, h_em = self._side(hypotheses, [f[1] for f in flags], h_len)
        return Batch(
            premise_ids=p_ids, hypothesis_ids=h_ids, premise_mask=p_mask, hypothesis_mask=h_mask,
            premise_chars=p_chars, hypothesis_chars=h_chars, premise_pos=p_pos, hypothesis_pos=h_pos,
            premise_exact_match=p_em, hypothesis_exact_match=h_em, labels=self._label_ids(items),
            ids=[item.pair.id for item in items],
            premise_tokens=[_shown_tokens(p) for p in premises],
            hypothesis_tokens=[_shown_tokens(h) for h in hypotheses],
            premise_pieces=self._piece_ids(premises, p_len), hypothesis_pieces=self._piece_ids(hypotheses, h_len),
        )

    def _piece_ids(self, sentences: list[SentenceAnalysis], length: int) -> torch.Tensor | None:
        """Word-piece ids [B, length, word_pieces] (0 = PAD), or None where the settings ask for none; an empty
        sentence's one position holds [UNK], as its word id does."""
        if self.pieces is None:
            return None
        k = self.settings.word_pieces
        flat: list[int] = []
        for sentence in sentences:
            words = self.pieces.of_words(sentence.tokens, k) if len(sentence) else [[UNK_PIECE]]
            for pieces in words:
                flat += pieces + [PAD_PIECE] * (k - len(pieces))
            flat += [PAD_PIECE] * (k * (length - len(words)))
        return torch.tensor(flat, dtype=torch.long).view(len(sentences), length, k)

    def _char_ids(self, token: str) -> list[int]:
        ids = self._char_cache.get(token)
        if ids is None:
            ids = self._char_cache[token] = self.char_vocab.encode_word(token, self.settings.max_chars)
        return ids

    def _side(self, sentences: list[SentenceAnalysis], flags: list[list[float]], length: int):
        """Flat padded lists for one side, turned into tensors once (per-row or nested-list tensors are
        several times slower)."""
        c = self.settings.max_chars
        no_chars = [PAD_ID] * c
        ids: list[int] = []
        mask: list[bool] = []
        chars: list[int] = []
        pos: list[int] = []
        exact: list[float] = []
        for sentence, sentence_flags in zip(sentences, flags):
            n = len(sentence)
            if n == 0:  # empty sentence: one UNK token (see module docstring)
                ids += [UNK_ID] + [PAD_ID] * (length - 1)
                mask += [True] + [False] * (length - 1)
                chars += no_chars * length
                pos += [0] * length
                exact += [0.0] * length
                continue
            pad = length - n
            ids += self.vocab.encode(sentence.tokens) + [PAD_ID] * pad
            mask += [True] * n + [False] * pad
            for token in sentence.tokens:
                chars += self._char_ids(token)
            chars += no_chars * pad
            pos += [pos_index(tag) for tag in sentence.tags] + [0] * pad
            exact += list(sentence_flags) + [0.0] * pad
        b = len(sentences)
        return (torch.tensor(ids, dtype=torch.long).view(b, length),
                torch.tensor(mask, dtype=torch.bool).view(b, length),
                torch.tensor(chars, dtype=torch.long).view(b, length, c),
                torch.tensor(pos, dtype=torch.long).view(b, length),
                torch.tensor(exact, dtype=torch.float32).view(b, length))

    def encode_text_reported(self, premise: str, hypothesis: str) -> EncodedText:
        """`encode_text` plus the `Truncation` (how many tokens the cut-offs removed)."""
        for name, text in (("premise", premise), ("hypothesis", hypothesis)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"the {name} is empty; type a sentence with at least one word")
        premise_analysis, hypothesis_analysis = analyse_text_pair(premise, hypothesis)
        for name, sentence in (("premise", premise_analysis), ("hypothesis", hypothesis_analysis)):
            if len(sentence) == 0:
                raise ValueError(f"the {name} has no tokens after tokenisation; type a sentence")
        item = AnalysedPair(Pair(id="input", premise=premise, hypothesis=hypothesis),
                            premise_analysis, hypothesis_analysis)
        return EncodedText(self.encode([item]), self.settings.truncation(premise_analysis, hypothesis_analysis))

    def encode_text(self, premise: str, hypothesis: str) -> Batch:
        """A one-pair `Batch` for free text (runs spaCy; labels None).

        Empty or whitespace-only text raises ValueError. Text longer than the cut-offs is cut like
        training data; call `encode_text_reported` to learn whether that happened.
        """
        return self.encode_text_reported(premise, hypothesis).batch


def cut_sentence(sentence: SentenceAnalysis, max_len: int) -> SentenceAnalysis:
    """The first `max_len` tokens of a sentence, as the featurizer reads it."""
    if len(sentence) <= max_len:
        return sentence
    return SentenceAnalysis(sentence.tokens[:max_len], sentence.tags[:max_len], sentence.lemmas[:max_len])


def _shown_tokens(sentence: SentenceAnalysis) -> list[str]:
    """Token strings aligned with the mask (an empty sentence shows its one UNK position)."""
    return list(sentence.tokens) if len(sentence) else [EMPTY_SENTENCE_TOKEN]
