"""spaCy analysis and the Featurizer: masks, padding, truncation, exact match on cut tokens, errors."""
from __future__ import annotations

import pytest
import torch

from nlivis.data.records import NLI_LABELS, Pair
from nlivis.features.sentences import SentenceAnalysis, analyse_sentences
from nlivis.features.dataset import AnalysedPair
from nlivis.features.featurize import Featurizer
from nlivis.features.settings import FeatureSettings
from nlivis.features.pos import TAG_INDEX
from nlivis.features.vocab import CharVocabulary, Vocabulary


@pytest.fixture(scope="module")
def nlp():
    from nlivis.features.spacy_pipeline import load_nlp

    return load_nlp()


def _sentence(text: str) -> SentenceAnalysis:
    tokens = tuple(text.split())
    return SentenceAnalysis(tokens, tuple("NN" for _ in tokens), tuple(t.lower() for t in tokens))


def _item(pair_id: str, premise: str, hypothesis: str, label: str | None = "neutral") -> AnalysedPair:
    return AnalysedPair(Pair(pair_id, premise, hypothesis, label), _sentence(premise), _sentence(hypothesis))


def _featurizer(items, **settings) -> Featurizer:
    token_lists = [list(i.premise.tokens) + list(i.hypothesis.tokens) for i in items]
    return Featurizer(Vocabulary.build(token_lists), CharVocabulary.build(token_lists),
                      FeatureSettings(**settings), NLI_LABELS)


def test_analyse_sentences_tokens_tags_lemmas_and_whitespace(nlp):
    first, second, empty = analyse_sentences(["Two dogs  ran.\n", "Two dogs  ran.\n", ""])
    assert first.tokens == ("Two", "dogs", "ran", ".")
    assert first.tags == ("CD", "NNS", "VBD", ".")
    assert first.lemmas == ("two", "dog", "run", ".")
    assert second == first
    assert len(empty) == 0


def test_masks_padding_and_shapes():
    items = [_item("a", "x y z w", "y", "entailment"), _item("b", "q", "x q r", "contradiction")]
    batch = _featurizer(items, max_premise_len=10, max_hypothesis_len=10, max_chars=6).encode(items)
    assert batch.premise_ids.shape == (2, 4) and batch.hypothesis_ids.shape == (2, 3)
    assert batch.premise_chars.shape == (2, 4, 6)
    assert batch.premise_mask.tolist() == [[True] * 4, [True, False, False, False]]
    assert batch.hypothesis_mask.tolist() == [[True, False, False], [True] * 3]
    for name in ("ids", "chars", "pos", "exact_match"):
        tensor = getattr(batch, f"premise_{name}")
        assert not tensor[1, 1:].any(), f"premise_{name} must be zero on padding"
    assert batch.premise_pos[0, 0].item() == TAG_INDEX["NN"]
    assert batch.labels.tolist() == [0, 2]
    assert batch.ids == ["a", "b"] and batch.hypothesis_tokens[0] == ["y"]
    assert batch.premise_exact_match[0].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert batch.hypothesis_exact_match[1].tolist() == [0.0, 1.0, 0.0]


def test_padding_does_not_change_a_pairs_features():
    short = _item("s", "a b", "b c")
    long = _item("l", "a b c d e f g", "g f e d c b a")
    featurizer = _featurizer([short, long], max_premise_len=20, max_hypothesis_len=20)
    alone = featurizer.encode([short])
    together = featurizer.encode([short, long])
    n = alone.premise_ids.shape[1]
    assert torch.equal(alone.premise_ids[0], together.premise_ids[0, :n])
    assert torch.equal(alone.premise_exact_match[0], together.premise_exact_match[0, :n])


def test_truncation_keeps_first_tokens_and_exact_match_uses_kept_tokens_only():
    item = _item("t", "a b c d e", "e a")
    featurizer = _featurizer([item], max_premise_len=3, max_hypothesis_len=5)
    batch = featurizer.encode([item])
    assert batch.premise_tokens == [["a", "b", "c"]]
    assert batch.hypothesis_exact_match[0].tolist() == [0.0, 1.0]  # "e" was cut from the premise
    truncation = featurizer.settings.truncation(item.premise, item.hypothesis)
    assert truncation.any and truncation.describe() == "premise cut from 5 to 3 tokens"


def test_pad_to_cutoff_gives_fixed_shape():
    item = _item("t", "a b", "c")
    batch = _featurizer([item], max_premise_len=6, max_hypothesis_len=4, pad_to_cutoff=True).encode([item])
    assert batch.premise_ids.shape == (1, 6) and batch.hypothesis_mask.shape == (1, 4)


def test_missing_label_gives_none_and_foreign_label_is_an_error():
    items = [_item("a", "x", "y", None), _item("b", "x", "y", "neutral")]
    featurizer = _featurizer(items, max_premise_len=5, max_hypothesis_len=5)
    assert featurizer.encode(items).labels is None
    with pytest.raises(ValueError, match="pair c: label 'duplicate'"):
        featurizer.encode([_item("c", "x", "y", "duplicate")])


def test_empty_sentence_in_data_gets_one_unk_position():
    item = AnalysedPair(Pair("e", "", "y", "neutral"), _sentence(""), _sentence("y"))
    batch = _featurizer([item], max_premise_len=5, max_hypothesis_len=5).encode([item])
    assert batch.premise_mask.tolist() == [[True]] and batch.premise_ids.tolist() == [[1]]
    assert batch.premise_tokens == [[""]]


def test_encode_text_runs_spacy_and_reports_truncation(nlp):
    items = [_item("a", "A dog runs .", "A dog sleeps .")]
    featurizer = _featurizer(items, max_premise_len=4, max_hypothesis_len=8)
    encoded = featurizer.encode_text_reported("A big dog runs in the park.", "A dog runs.")
    assert encoded.batch.premise_tokens == [["A", "big", "dog", "runs"]]
    assert encoded.truncation.premise_tokens == 8 and encoded.truncation.any
    assert encoded.batch.labels is None
    assert featurizer.encode_text("A dog runs.", "A dog.").hypothesis_ids.shape == (1, 3)


def test_a_typed_pair_is_analysed_once_for_every_featurizer(nlp, monkeypatch, tmp_path):
    """The app reads one pair with each loaded model; spaCy ran once per model (about 9 of 27 ms for five). The
    analyses are kept on disk: a later process (here: the memory cleared) reads them back without spaCy."""
    from nlivis.features import sentences as analysis

    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    real = analysis.analyse_sentences
    monkeypatch.setattr(analysis, "analyse_sentences", lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw))
    analysis.analyse_text_pair.cache_clear()
    items = [_item("a", "A dog runs .", "A dog sleeps .")]
    narrow = _featurizer(items, max_premise_len=2, max_hypothesis_len=8)
    wide = _featurizer(items, max_premise_len=8, max_hypothesis_len=8)
    first = narrow.encode_text_reported("A brown dog runs .", "A dog runs .")
    second = wide.encode_text_reported("A brown dog runs .", "A dog runs .")
    assert calls == [["A brown dog runs .", "A dog runs ."]]
    assert first.batch.premise_tokens == [["A", "brown"]] and second.batch.premise_tokens == [["A", "brown", "dog", "runs", "."]]
    wide.encode_text_reported("A cat sleeps .", "A dog runs .")
    assert len(calls) == 2
    analysis.analyse_text_pair.cache_clear()
    again = wide.encode_text_reported("A brown dog runs .", "A dog runs .")
    assert len(calls) == 2 and again.batch.premise_tokens == second.batch.premise_tokens
    assert analysis.analyse_text_pair("A brown dog runs .", "A dog runs .") == tuple(real(
        ["A brown dog runs .", "A dog runs ."]))  # read back as analysed: tokens, tags and lemmas
    kept = analysis.kept_pair_path("A brown dog runs .", "A dog runs .")
    kept.write_bytes(kept.read_bytes().replace(b"brown", b"Brown"))  # same size, other text: not trusted
    analysis.analyse_text_pair.cache_clear()
    wide.encode_text_reported("A brown dog runs .", "A dog runs .")
    assert len(calls) == 3


@pytest.mark.parametrize("premise, hypothesis, name", [("", "x", "premise"), ("x", " \n\t", "hypothesis")])
def test_encode_text_rejects_empty_text(premise, hypothesis, name):
    featurizer = _featurizer([_item("a", "x", "y")], max_premise_len=4, max_hypothesis_len=4)
    with pytest.raises(ValueError, match=f"the {name} is empty"):
        featurizer.encode_text(premise, hypothesis)


def test_settings_round_trip_and_validation():
    settings = FeatureSettings(max_premise_len=60, max_hypothesis_len=30, exact_match_rule="form")
    assert FeatureSettings.from_dict(settings.to_dict()) == settings
    with pytest.raises(ValueError, match="unknown feature settings"):
        FeatureSettings.from_dict({"max_len": 3})
    with pytest.raises(ValueError, match="exact_match_rule"):
        FeatureSettings(exact_match_rule="stems")
    with pytest.raises(ValueError, match="max_chars"):
        FeatureSettings(max_chars=0)


def test_cache_key_pipeline_version_matches_the_loaded_pipeline(nlp):
    from nlivis.features.spacy_pipeline import installed_pipeline_version
    from nlivis.features.spacy_pipeline import pipeline_version

    assert installed_pipeline_version() == pipeline_version()


# ------------------------------------------------------------------------- sentences longer than spaCy reads

@pytest.fixture
def short_spacy_limit(monkeypatch):
    """spaCy's nlp.max_length lowered to 60 characters, so a test needs no million-character sentence
    (the check must follow the pipeline's own limit, whatever it is set to)."""
    from nlivis.features.spacy_pipeline import load_nlp

    monkeypatch.setattr(load_nlp(), "max_length", 60)
    return 60


def test_an_over_long_sentence_in_a_file_names_file_and_line(tmp_path, short_spacy_limit):
    """Before: spaCy's E088 ('Text of length 1000001 exceeds maximum of 1000000') with no file or line."""
    from nlivis.data.readers import read_file
    from nlivis.data.records import InputError
    from nlivis.features.dataset import analyse_pairs

    path = tmp_path / "pairs.jsonl"
    long_hypothesis = "word " * 20
    path.write_text('{"gold_label": "neutral", "sentence1": "A b.", "sentence2": "C d."}\n'
                    f'{{"gold_label": "neutral", "sentence1": "A b.", "sentence2": "{long_hypothesis}"}}\n')
    with pytest.raises(InputError) as caught:
        analyse_pairs(read_file(path).pairs, cache_dir=tmp_path / "cache", progress=False)
    assert str(caught.value).startswith(f"{path}, line 2: the hypothesis has 100 characters; spaCy reads at most 60")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.*")), "nothing cached"


def test_an_over_long_typed_sentence_names_the_field(short_spacy_limit):
    from nlivis.data.records import InputError
    from nlivis.features.sentences import analyse_sentences, analyse_text_pair

    with pytest.raises(InputError, match="the premise has 61 characters; spaCy reads at most 60"):
        analyse_text_pair("x" * 61, "A dog runs.")
    with pytest.raises(InputError, match="sentence 2 has 70 characters"):
        analyse_sentences(["A dog.", "y" * 70])
    assert len(analyse_text_pair("x" * 60, "A dog runs.")[0]) == 1
