"""Protocols and split lookup: on hand-made folders, and against the real shared data (counts from its README)."""
from __future__ import annotations

import gzip
import shutil
from collections import Counter
from pathlib import Path

import pytest

from nlivis.data.protocols import (
    PROTOCOLS,
    SplitRef,
    all_protocol_refs,
    available_splits,
    get_protocol,
    read_split,
    require_training_splits,
    split_key,
)
from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS


def test_protocol_and_dataset_names():
    assert set(PROTOCOLS) == {"snli-small", "mnli-small", "quora-small", "snli", "mnli", "quora", "xnli_en", "mnli_hard"}
    for name, protocol in PROTOCOLS.items():
        assert get_protocol(name) is protocol and protocol.name == name
    with pytest.raises(ValueError, match="unknown dataset or protocol 'multinli'.*snli-small"):
        get_protocol("multinli")


def test_small_protocols_follow_the_data_readme():
    snli_small, mnli_small, quora_small = (get_protocol(name) for name in ("snli-small", "mnli-small", "quora-small"))
    assert snli_small.train == (SplitRef("snli", "test", "snli/esnli_tokenized"),)
    assert snli_small.select == SplitRef("snli", "dev", "snli/esnli_tokenized") and snli_small.report == (snli_small.select,)
    assert [split_key(ref) for ref in mnli_small.train] == ["xnli_en_test", "snli_test"]
    assert split_key(mnli_small.select) == "xnli_en_dev"
    assert [split_key(ref) for ref in mnli_small.report] == ["mnli_dev_matched", "mnli_dev_mismatched",
                                                            "mnli_hard_matched_test", "mnli_hard_mismatched_test"]
    assert {ref.subdir for ref in mnli_small.report} == {"mnli_dev", "mnli_hard"}
    assert [split_key(ref) for ref in (*quora_small.train, quora_small.select, *quora_small.report)] == ["quora_test", "quora_dev", "quora_dev"]
    assert quora_small.labels == PARAPHRASE_LABELS and snli_small.labels == mnli_small.labels == NLI_LABELS
    for protocol in (snli_small, mnli_small, quora_small):
        assert protocol.small
        assert "Reduced protocol, not the papers' training data" in protocol.note


def test_full_protocols():
    mnli = get_protocol("mnli")
    assert not mnli.small and "Reduced" not in mnli.note
    assert [split_key(ref) for ref in (*mnli.train, mnli.select, *mnli.report)] == [
        "mnli_train", "mnli_dev_matched", "mnli_dev_matched", "mnli_dev_mismatched"
    ]
    snli = get_protocol("snli")
    assert [ref.split for ref in (*snli.train, snli.select, *snli.report)] == ["train", "dev", "test"]
    assert all(ref.subdir == "" for name in ("snli", "mnli", "quora", "xnli_en", "mnli_hard") for ref in all_protocol_refs(get_protocol(name)))
    assert get_protocol("xnli_en").train == () and get_protocol("mnli_hard").train == ()


def test_all_protocol_refs_lists_each_split_once():
    refs = all_protocol_refs(get_protocol("mnli-small"))
    assert [split_key(ref) for ref in refs] == [
        "xnli_en_test", "snli_test", "xnli_en_dev", "mnli_dev_matched", "mnli_dev_mismatched",
        "mnli_hard_matched_test", "mnli_hard_mismatched_test"
    ]
    assert [split_key(ref) for ref in all_protocol_refs(get_protocol("snli-small"))] == ["snli_test", "snli_dev"]


def test_read_split_prefers_jsonl_then_txt_then_gz(fixtures: Path, tmp_path: Path):
    data = fixtures / "data"
    shutil.copy(data / "snli_sample.txt", tmp_path / "snli_1.0_dev.txt")
    ref = SplitRef("snli", "dev")
    assert read_split(ref, tmp_path).path == str(tmp_path / "snli_1.0_dev.txt")
    shutil.copy(data / "snli_sample.jsonl", tmp_path / "snli_1.0_dev.jsonl")
    assert [pair.id for pair in read_split(ref, tmp_path).pairs] == ["501.jpg#0r1n", "501.jpg#0r1c"]
    with open(data / "mnli_sample.jsonl", "rb") as plain, gzip.open(tmp_path / "multinli_1.0_dev_matched.jsonl.gz", "wb") as packed:
        shutil.copyfileobj(plain, packed)
    assert len(read_split(SplitRef("mnli", "dev_matched"), tmp_path).pairs) == 3


def test_read_split_in_subdir_and_line_aligned(fixtures: Path, tmp_path: Path):
    shutil.copytree(fixtures / "data" / "line_aligned", tmp_path / "corpus" / "snli")
    result = read_split(SplitRef("snli", "dev", "corpus/snli"), tmp_path)
    assert [pair.label for pair in result.pairs] == ["entailment", "contradiction"] and result.dropped_no_gold == 1
    shutil.copy(fixtures / "data" / "quora_sample.tsv", tmp_path / "dev.tsv")
    assert len(read_split(SplitRef("quora", "dev"), tmp_path).pairs) == 3
    shutil.copytree(fixtures / "data" / "line_aligned", tmp_path / "hard" / "mismatched")
    for name in ("s1", "s2", "labels"):
        (tmp_path / "hard" / "mismatched" / f"{name}.dev").rename(tmp_path / "hard" / "mismatched" / f"{name}.test")
    assert len(read_split(SplitRef("mnli_hard", "mismatched_test", "hard"), tmp_path).pairs) == 2


def test_missing_split_names_folder_and_file_names(tmp_path: Path):
    with pytest.raises(FileNotFoundError) as error:
        read_split(SplitRef("mnli", "dev_mismatched", "multinli_1.0"), tmp_path)
    message = str(error.value)
    assert str(tmp_path / "multinli_1.0") in message
    for name in ("multinli_1.0_dev_mismatched.jsonl", "multinli_1.0_dev_mismatched.txt", "s1.dev_mismatched", ".gz"):
        assert name in message
    with pytest.raises(ValueError, match="no split 'validation'"):
        read_split(SplitRef("snli", "validation"), tmp_path)
    with pytest.raises(ValueError, match="unknown dataset 'rte'"):
        read_split(SplitRef("rte", "dev"), tmp_path)


def test_read_split_rejects_labels_of_another_dataset(fixtures: Path, tmp_path: Path):
    shutil.copy(fixtures / "data" / "quora_sample.tsv", tmp_path / "xnli.dev.en.genre.tsv")
    with pytest.raises(ValueError, match="do not belong to xnli_en"):
        read_split(SplitRef("xnli_en", "dev"), tmp_path)


def test_available_and_required_splits(fixtures: Path, tmp_path: Path):
    snli = get_protocol("snli")
    shutil.copy(fixtures / "data" / "snli_sample.jsonl", tmp_path / "snli_1.0_dev.jsonl")
    assert available_splits(snli, tmp_path) == (SplitRef("snli", "dev"),)
    with pytest.raises(FileNotFoundError, match="snli train .*snli_1.0_train.jsonl.*; snli test"):
        require_training_splits(snli, tmp_path)
    for split in ("train", "test"):
        shutil.copy(fixtures / "data" / "snli_sample.txt", tmp_path / f"snli_1.0_{split}.txt")
    require_training_splits(snli, tmp_path)
    with pytest.raises(ValueError, match="evaluation only"):
        require_training_splits(get_protocol("mnli_hard"), tmp_path)


# ---- the real data (../shared/data): counts and label distributions from its README ----

REAL_SPLITS = [
    # (split, pairs, label counts)
    (SplitRef("snli", "dev", "snli/esnli_tokenized"), 9842, {"entailment": 3329, "neutral": 3235, "contradiction": 3278}),
    (SplitRef("snli", "test", "snli/esnli_tokenized"), 9824, {"entailment": 3368, "neutral": 3219, "contradiction": 3237}),
    (SplitRef("quora", "dev", "quora"), 10000, {"duplicate": 5000, "not_duplicate": 5000}),
    (SplitRef("quora", "test", "quora"), 10000, {"duplicate": 5000, "not_duplicate": 5000}),
    (SplitRef("xnli_en", "dev", "xnli_en"), 2490, {"entailment": 830, "neutral": 830, "contradiction": 830}),
    (SplitRef("xnli_en", "test", "xnli_en"), 5010, {"entailment": 1670, "neutral": 1670, "contradiction": 1670}),
    (SplitRef("mnli_hard", "matched_test", "mnli_hard"), 4573, {"entailment": 1701, "neutral": 1486, "contradiction": 1386}),
    (SplitRef("mnli_hard", "mismatched_test", "mnli_hard"), 4530, {"entailment": 1710, "neutral": 1400, "contradiction": 1420}),
]


@pytest.mark.parametrize(("ref", "count", "labels"), REAL_SPLITS, ids=[split_key(ref) for ref, _, _ in REAL_SPLITS])
def test_real_split_counts_and_labels(shared_data: Path, ref: SplitRef, count: int, labels: dict[str, int]):
    result = read_split(ref, shared_data)
    assert len(result.pairs) == count
    assert dict(Counter(pair.label for pair in result.pairs)) == labels
    assert result.dropped_no_gold == 0
    assert len({pair.id for pair in result.pairs}) == count


@pytest.mark.parametrize(("split", "count", "dropped", "labels", "repeated_ids"), [
    ("dev_matched", 9815, 185, {"entailment": 3479, "neutral": 3123, "contradiction": 3213}, 0),
    ("dev_mismatched", 9832, 168, {"entailment": 3463, "neutral": 3129, "contradiction": 3240}, 27),
])
def test_full_multinli_dev_sets_of_mnli_small(shared_data: Path, split, count, dropped, labels, repeated_ids):
    ref = SplitRef("mnli", split, "mnli_dev")
    assert ref in get_protocol("mnli-small").report
    result = read_split(ref, shared_data)
    assert len(result.pairs) == count and result.dropped_no_gold == dropped
    assert dict(Counter(pair.label for pair in result.pairs)) == labels
    assert len(result.ambiguous_ids) == repeated_ids and len({pair.id for pair in result.pairs}) == count


def test_gold_tag_file_is_found_for_the_full_dev_sets_only(shared_data: Path, tmp_path: Path):
    from nlivis.data.protocols import gold_tag_file

    matched = gold_tag_file(SplitRef("mnli", "dev_matched", "mnli_dev"), shared_data)
    assert matched == shared_data / "mnli_annotations" / "multinli_1.0_matched_annotations.txt"
    assert gold_tag_file(SplitRef("mnli_hard", "matched_test", "mnli_hard"), shared_data) is None
    assert gold_tag_file(SplitRef("mnli", "dev_matched"), tmp_path) is None
    (tmp_path / "multinli_1.0_mismatched_annotations.txt").write_text("1e\t#MODAL\n", encoding="utf-8")
    assert gold_tag_file(SplitRef("mnli", "dev_mismatched"), tmp_path) == tmp_path / "multinli_1.0_mismatched_annotations.txt"


@pytest.mark.parametrize(("split", "per_genre"), [("dev", 249), ("test", 501)])
def test_xnli_en_has_the_ten_multinli_genres(shared_data: Path, split: str, per_genre: int):
    genres = Counter(pair.genre for pair in read_split(SplitRef("xnli_en", split, "xnli_en"), shared_data).pairs)
    assert set(genres) == {
        "facetoface", "telephone", "oup", "fiction", "travel", "government", "nineeleven", "letters", "slate", "verbatim"
    }
    assert set(genres.values()) == {per_genre}


def test_small_protocols_are_complete_in_the_shared_data(shared_data: Path):
    for name in ("snli-small", "mnli-small", "quora-small"):
        protocol = get_protocol(name)
        assert available_splits(protocol, shared_data) == all_protocol_refs(protocol)
        require_training_splits(protocol, shared_data)


def test_full_snli_protocol_on_the_esnli_folder(shared_data: Path):
    folder = shared_data / "snli" / "esnli_tokenized"
    assert [ref.split for ref in available_splits(get_protocol("snli"), folder)] == ["dev", "test"]
    with pytest.raises(FileNotFoundError, match="snli train"):
        require_training_splits(get_protocol("snli"), folder)
    assert [ref.split for ref in available_splits(get_protocol("mnli_hard"), shared_data / "mnli_hard")] == [
        "matched_test", "mismatched_test"
    ]
