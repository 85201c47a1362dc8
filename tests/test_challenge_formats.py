"""Every challenge-file format in `data.challenge.FORMATS` reads back what a small file of it holds, plain and
gzip-compressed, and the upload widget offers exactly the registry's suffixes."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Callable

import pytest

from nlivis.data.challenge import COMPRESSED_SUFFIX, FORMATS, challenge_format, read_challenge_files, upload_types

PAIRS = [("A man plays a guitar.", "A person makes music.", "entailment", "fiction"),
         ("Two dogs run, \"fast\".", "No animal moves.", "contradiction", "travel")]
"""(premise, hypothesis, label, genre): the second has quotes and a comma, which CSV must quote."""


def _line_aligned(folder: Path) -> Path:
    for prefix, column in (("s1", 0), ("s2", 1), ("labels", 2)):
        (folder / f"{prefix}.dev").write_text("".join(f"{pair[column]}\n" for pair in PAIRS), encoding="utf-8")
    return folder / "s1.dev"


def _csv(folder: Path) -> Path:
    quoted = [",".join('"' + cell.replace('"', '""') + '"' for cell in pair) for pair in PAIRS]
    (folder / "pairs.csv").write_text("\n".join(["premise,hypothesis,label,genre", *quoted]) + "\n", encoding="utf-8")
    return folder / "pairs.csv"


def _tsv(folder: Path) -> Path:
    rows = ["\t".join(pair) for pair in PAIRS]
    (folder / "pairs.tsv").write_text("\n".join(["sentence1\tsentence2\tgold_label\tgenre", *rows]) + "\n",
                                      encoding="utf-8")
    return folder / "pairs.tsv"


def _jsonl(folder: Path) -> Path:
    records = [{"sentence1": p, "sentence2": h, "gold_label": label, "genre": genre} for p, h, label, genre in PAIRS]
    (folder / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder / "pairs.jsonl"


WRITERS: dict[str, Callable[[Path], Path]] = {"line-aligned": _line_aligned, "csv": _csv, "tsv": _tsv, "jsonl": _jsonl}
"""A small file per format; a format added to FORMATS without one here fails `test_every_format_has_a_fixture`."""


def test_every_format_has_a_fixture():
    assert set(WRITERS) == set(FORMATS)


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gz"])
def test_a_format_round_trips_through_the_reader(tmp_path, name, compressed):
    path = WRITERS[name](tmp_path)
    if compressed:
        for plain in [p for p in tmp_path.iterdir() if p.is_file()]:
            plain.with_name(plain.name + COMPRESSED_SUFFIX).write_bytes(gzip.compress(plain.read_bytes()))
            plain.unlink()
        path = path.with_name(path.name + COMPRESSED_SUFFIX)
    assert challenge_format(path.name) is FORMATS[name]
    found = read_challenge_files([path])
    assert [(p.premise, p.hypothesis, p.label) for p in found.pairs] == [pair[:3] for pair in PAIRS]
    if name != "line-aligned":  # the line-aligned files have no extra fields
        assert [found.fields[p.id]["genre"] for p in found.pairs] == [pair[3] for pair in PAIRS]


def test_the_upload_widget_offers_every_suffix_and_a_name_of_no_format_is_refused(tmp_path):
    suffixes = {suffix.lstrip(".") for f in FORMATS.values() for suffix in f.suffixes}
    assert set(upload_types()) == suffixes | {COMPRESSED_SUFFIX.lstrip(".")}
    (tmp_path / "pairs.xml").write_text("<pairs/>", encoding="utf-8")
    assert challenge_format("pairs.xml") is None
    with pytest.raises(ValueError, match="jsonl"):
        read_challenge_files([tmp_path / "pairs.xml"])
