"""The analysis cache: second run reads it, changed source or pipeline misses it, corrupt file rebuilt."""
from __future__ import annotations

import gzip

import pytest

from nlivis.data.protocols import SplitRef
from nlivis.data.records import Pair
from nlivis.features import sentences as analysis
from nlivis.features import dataset
from nlivis.features.cache import AnalysisCache
from nlivis.store.files import cache_root
from nlivis.features.dataset import analyse_pairs, analyse_pairs_reported, load_split_analysed


class SpacyCalls:
    def __init__(self):
        self.analyses: list[list[str]] = []
        self.loads = 0


@pytest.fixture
def counted_spacy(monkeypatch):
    """Replace spaCy by a whitespace analyser that counts model loads and analyses (the cache logic
    is the subject)."""
    calls = SpacyCalls()

    def fake(texts, progress=False, batch_size=0):
        calls.analyses.append(list(texts))
        return [analysis.SentenceAnalysis(tuple(t.split()), tuple("NN" for _ in t.split()),
                                          tuple(w.lower() for w in t.split())) for t in texts]

    def fake_load():
        calls.loads += 1

    monkeypatch.setattr(analysis, "analyse_sentences", fake)
    monkeypatch.setattr(dataset, "load_nlp", fake_load)
    monkeypatch.setattr(AnalysisCache, "pipeline", property(lambda self: "test-pipeline-1"))
    return calls


PAIRS = [Pair("1", "A dog runs", "A dog moves", "entailment"), Pair("2", "It rains", "It is dry", "contradiction")]


def test_second_run_reads_the_cache(tmp_path, counted_spacy):
    first, report = analyse_pairs_reported(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert not report.cached and len(counted_spacy.analyses) == 1
    second, report = analyse_pairs_reported(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert report.cached and len(counted_spacy.analyses) == 1 and counted_spacy.loads == 1, \
        "a cache hit must neither load nor run spaCy"
    assert second == first
    assert second[1].hypothesis.tokens == ("It", "is", "dry")
    assert list(tmp_path.glob("*.tmp")) == []


def test_changed_pairs_or_pipeline_miss_the_cache(tmp_path, counted_spacy, monkeypatch):
    analyse_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    changed = [PAIRS[0], Pair("2", "It rains", "It is wet", "neutral")]
    items = analyse_pairs(changed, cache_dir=tmp_path, cache_key="k", progress=False)
    assert len(counted_spacy.analyses) == 2 and items[1].hypothesis.tokens[-1] == "wet"
    monkeypatch.setattr(AnalysisCache, "pipeline", property(lambda self: "test-pipeline-2"))
    analyse_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert len(counted_spacy.analyses) == 3


def test_corrupt_cache_file_is_rebuilt_with_a_warning(tmp_path, counted_spacy):
    analyse_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    path = AnalysisCache(tmp_path).path_for("k")
    complete = gzip.decompress(path.read_bytes())
    path.write_bytes(gzip.compress(complete[: len(complete) - 20]))  # a pair cut in half
    with pytest.warns(UserWarning, match="corrupt"):
        items = analyse_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert len(counted_spacy.analyses) == 2 and items[0].premise.tokens == ("A", "dog", "runs")
    path.write_bytes(gzip.compress(b'{"format": "nlivis-analysis-cache"}\n'))
    with pytest.warns(UserWarning, match="corrupt"):
        analyse_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    damaged = bytearray(path.read_bytes())
    damaged[30:60] = bytes(b ^ 0xFF for b in damaged[30:60])  # a damaged deflate stream
    path.write_bytes(bytes(damaged))
    with pytest.warns(UserWarning, match="corrupt"):
        analyse_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    path.write_bytes(b"not gzip at all")
    with pytest.warns(UserWarning, match="corrupt"):
        analyse_pairs(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)
    assert analyse_pairs_reported(PAIRS, cache_dir=tmp_path, cache_key="k", progress=False)[1].cached


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
    items, result = load_split_analysed(ref, data, cache_dir=tmp_path / "cache")
    assert [i.pair.id for i in items] == ["1"] and result.dropped_no_gold == 1
    load_split_analysed(ref, data, cache_dir=tmp_path / "cache")
    assert len(counted_spacy.analyses) == 1
    _write_split(data, ["A dog moves .", "It is wet ."])  # only the dropped pair changed
    load_split_analysed(ref, data, cache_dir=tmp_path / "cache")
    assert len(counted_spacy.analyses) == 2, "a changed source file must invalidate the cache"
    assert len(list((tmp_path / "cache").glob("analysis-snli_dev-*.jsonl.gz"))) == 2


def test_prepare_prints_counts_and_reports_cache_use(tmp_path, counted_spacy, capsys):
    from argparse import Namespace

    from nlivis.cli import prepare

    data = tmp_path / "snli"
    _write_split(data, ["A dog moves .", "It is dry ."])
    args = Namespace(dataset="snli", data_dir=str(data), cache_dir=str(tmp_path / "cache"))
    assert prepare.run(args) == 0
    first = capsys.readouterr().out
    row = next(line for line in first.splitlines() if line.startswith("snli_dev"))
    assert row.split()[1:4] == ["1", "1", "entailment:1"] and row.endswith("built")
    assert "snli_train, snli_test" in first
    prepare.run(args)
    assert next(line for line in capsys.readouterr().out.splitlines()
                if line.startswith("snli_dev")).endswith("cached")
    with pytest.raises(FileNotFoundError, match="none of snli's splits"):
        prepare.run(Namespace(dataset="snli", data_dir=str(tmp_path), cache_dir=None))


def test_unwritable_cache_folder_warns_and_still_analyses(tmp_path, counted_spacy):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.warns(UserWarning, match="could not write the feature cache"):
        items = analyse_pairs(PAIRS, cache_dir=blocker / "cache", cache_key="k", progress=False)
    assert [item.pair.id for item in items] == ["1", "2"]
