"""The analysis cache: second run reads it, changed source or pipeline misses it, corrupt file rebuilt."""
from __future__ import annotations

import gzip

import pytest

from nlivis.data.protocols import SplitRef
from nlivis.data.records import Pair
from nlivis.features import analysis
from nlivis.features.cache import AnalysisCache, cache_root
from nlivis.features.dataset import analyze_pairs, analyze_pairs_reported, load_split_analyzed


@pytest.fixture
def counted_spacy(monkeypatch):
    """Replace spaCy by a whitespace analyser that counts its calls (the cache logic is the subject)."""
    calls = []

    def fake(texts, progress=False, batch_size=0):
        calls.append(list(texts))
        return [analysis.SentenceAnalysis(tuple(t.split()), tuple("NN" for _ in t.split()),
                                          tuple(w.lower() for w in t.split())) for t in texts]

    monkeypatch.setattr(analysis, "analyze_sentences", fake)
    monkeypatch.setattr(AnalysisCache, "pipeline", property(lambda self: "test-pipeline-1"))
    return calls


PAIRS = [Pair("1", "A dog runs", "A dog moves", "entailment"), Pair("2", "It rains", "It is dry", "contradiction")]


def test_second_run_reads_the_cache(tmp_path, counted_spacy):
    first, report = analyze_pairs_reported(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert not report.cached and len(counted_spacy) == 1
    second, report = analyze_pairs_reported(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert report.cached and len(counted_spacy) == 1
    assert second == first
    assert second[1].hypothesis.tokens == ("It", "is", "dry")
    assert list(tmp_path.glob("*.tmp")) == []


def test_changed_pairs_or_pipeline_miss_the_cache(tmp_path, counted_spacy, monkeypatch):
    analyze_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    changed = [PAIRS[0], Pair("2", "It rains", "It is wet", "neutral")]
    items = analyze_pairs(changed, cache_dir=tmp_path, cache_key="k", progress=False)
    assert len(counted_spacy) == 2 and items[1].hypothesis.tokens[-1] == "wet"
    monkeypatch.setattr(AnalysisCache, "pipeline", property(lambda self: "test-pipeline-2"))
    analyze_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert len(counted_spacy) == 3


def test_corrupt_cache_file_is_rebuilt_with_a_warning(tmp_path, counted_spacy):
    analyze_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    path = AnalysisCache(tmp_path).path_for("k")
    complete = gzip.decompress(path.read_bytes())
    path.write_bytes(gzip.compress(complete[: len(complete) - 20]))  # a pair cut in half
    with pytest.warns(UserWarning, match="corrupt"):
        items = analyze_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert len(counted_spacy) == 2 and items[0].premise.tokens == ("A", "dog", "runs")
    path.write_bytes(gzip.compress(b'{"format": "nlivis-analysis-cache"}\n'))
    with pytest.warns(UserWarning, match="corrupt"):
        analyze_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    path.write_bytes(b"not gzip at all")
    with pytest.warns(UserWarning, match="corrupt"):
        analyze_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert analyze_pairs_reported(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)[1].cached


def test_cache_root_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.delenv("NLIVIS_CACHE_DIR")
    assert cache_root().parts[-2:] == (".cache", "nlivis")


def _write_split(folder, hypotheses):
    folder.mkdir(exist_ok=True)
    (folder / "s1.dev").write_text("A dog runs .\nIt rains .\n", encoding="utf-8")
    (folder / "s2.dev").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    (folder / "labels.dev").write_text("entailment\n-\n", encoding="utf-8")


def test_split_cache_is_keyed_by_source_content(tmp_path, counted_spacy):
    data = tmp_path / "snli"
    _write_split(data, ["A dog moves .", "It is dry ."])
    ref = SplitRef("snli", "dev", "")
    items, result = load_split_analyzed(ref, data, cache_dir=tmp_path / "cache")
    assert [i.pair.id for i in items] == ["1"] and result.dropped_no_gold == 1
    load_split_analyzed(ref, data, cache_dir=tmp_path / "cache")
    assert len(counted_spacy) == 1
    _write_split(data, ["A dog moves .", "It is wet ."])  # only the dropped pair changed
    load_split_analyzed(ref, data, cache_dir=tmp_path / "cache")
    assert len(counted_spacy) == 2, "a changed source file must invalidate the cache"
    assert len(list((tmp_path / "cache").glob("analysis-snli_dev-*.jsonl.gz"))) == 2
