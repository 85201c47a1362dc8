"""POS mapping, exact match, char ids and vocabularies: pure functions, no spaCy."""
from __future__ import annotations

import json

import pytest

from nlivis.features.chars import char_ids
from nlivis.features.exact_match import exact_match_flags
from nlivis.features.pos import NUM_POS_TAGS, PTB_TAGS, TAG_INDEX, pos_index, spacy_to_ptb
from nlivis.features.vocab import CharVocabulary, Vocabulary, VocabularyFileError


def test_ptb_tags_map_to_themselves():
    for tag in PTB_TAGS[1:]:
        assert spacy_to_ptb(tag) == tag
        assert pos_index(tag) == TAG_INDEX[tag]
    assert NUM_POS_TAGS == 47


@pytest.mark.parametrize("spacy_tag, ptb_tag", [
    ("HYPH", ":"), ("NFP", ":"), ("ADD", "NN"), ("AFX", "JJ"), ("-LSB-", "-LRB-"), ("-RCB-", "-RRB-"),
    ("XX", "XX"),
])
def test_spacy_extra_tags_go_to_nearest_ptb_tag(spacy_tag, ptb_tag):
    assert spacy_to_ptb(spacy_tag) == ptb_tag
    assert pos_index(spacy_tag) == TAG_INDEX[ptb_tag] > 0


@pytest.mark.parametrize("tag", ["_SP", "NIL", "", "<PAD>", "nonsense"])
def test_unknown_tags_are_index_zero(tag):
    assert pos_index(tag) == 0


def test_every_spacy_tagger_label_is_mapped_except_whitespace():
    from nlivis.features.spacy_pipeline import load_nlp

    labels = load_nlp().get_pipe("tagger").labels
    assert [label for label in labels if pos_index(label) == 0] == ["_SP"]


def test_exact_match_form_or_lemma_known_values():
    premise = (["Two", "dogs", "ran", "."], ["two", "dog", "run", "."])
    hypothesis = (["A", "dog", "is", "running", "."], ["a", "dog", "be", "run", "."])
    flags_p, flags_h = exact_match_flags(*premise, *hypothesis, rule="form_or_lemma")
    assert flags_p == [0.0, 1.0, 1.0, 1.0]
    assert flags_h == [0.0, 1.0, 0.0, 1.0, 1.0]


def test_exact_match_form_only_is_case_insensitive_and_ignores_lemmas():
    premise = (["Two", "Dogs", "ran"], ["two", "dog", "run"])
    hypothesis = (["dogs", "dog", "running"], ["dog", "dog", "run"])
    flags_p, flags_h = exact_match_flags(*premise, *hypothesis, rule="form")
    assert flags_p == [0.0, 1.0, 0.0]
    assert flags_h == [1.0, 0.0, 0.0]


def test_exact_match_lemma_of_one_side_matches_form_of_other():
    flags_p, flags_h = exact_match_flags(["cats"], ["cat"], ["cat"], ["cat"])
    assert flags_p == [1.0] and flags_h == [1.0]


def test_exact_match_empty_sentence_and_unknown_rule():
    assert exact_match_flags([], [], ["a"], ["a"]) == ([], [0.0])
    with pytest.raises(ValueError, match="unknown exact-match rule"):
        exact_match_flags(["a"], ["a"], ["a"], ["a"], rule="stem")


def test_char_ids_crop_and_pad():
    index = {"a": 2, "b": 3}
    assert char_ids("ab?", index, max_chars=5) == [2, 3, 1, 0, 0]
    assert char_ids("ab" * 20, index, max_chars=16) == [2, 3] * 8


def test_vocabulary_frequency_cutoff_order_and_max_size():
    tokens = [["the", "cat", "the", "dog"], ["the", "cat", "bird"]]
    vocab = Vocabulary.build(tokens, min_freq=2)
    assert vocab.symbols == ("<PAD>", "<UNK>", "the", "cat")
    assert vocab.encode(["cat", "dog", "the"]) == [3, 1, 2]
    small = Vocabulary.build(tokens, max_size=3)
    assert small.symbols == ("<PAD>", "<UNK>", "the")
    ties = Vocabulary.build([["b", "a"]])
    assert ties.symbols[2:] == ("a", "b")


def test_vocabulary_lowercase_flag_applies_to_lookup():
    vocab = Vocabulary.build([["The", "the", "CAT"]], lowercase=True)
    assert vocab.symbols == ("<PAD>", "<UNK>", "the", "cat")
    assert vocab.encode(["THE", "Cat"]) == [2, 3]
    cased = Vocabulary.build([["The", "the"]])
    assert cased.encode(["THE"]) == [1]


def test_vocabulary_round_trip(tmp_path):
    vocab = Vocabulary.build([["Ünïcode", "b", "b"]], lowercase=True)
    vocab.save(tmp_path / "v.json")
    loaded = Vocabulary.load(tmp_path / "v.json")
    assert loaded == vocab and loaded.lowercase
    chars = CharVocabulary.build([["abc", "ab"]])
    chars.save(tmp_path / "c.json")
    assert CharVocabulary.load(tmp_path / "c.json") == chars
    assert chars.encode_word("abz", max_chars=4) == [chars.index["a"], chars.index["b"], 1, 0]


@pytest.mark.parametrize("content, problem", [
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"format": "nlivis-vocabulary", "version": 1, "kind": "word", "lowercase": False,
                 "symbols": ["a", "b"]}), "starts with"),
    (json.dumps({"format": "nlivis-vocabulary", "version": 1, "kind": "word", "lowercase": False,
                 "symbols": ["<PAD>", "<UNK>", "x", "x"]}), "unique"),
    (json.dumps({"format": "nlivis-vocabulary", "version": 1, "kind": "char", "lowercase": False,
                 "symbols": ["<PAD>", "<UNK>"]}), "'char' vocabulary"),
    (json.dumps({"format": "other"}), "'format'"),
])
def test_corrupt_vocabulary_file_names_file_and_problem(tmp_path, content, problem):
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(VocabularyFileError, match=problem) as error:
        Vocabulary.load(path)
    assert str(path) in str(error.value)
