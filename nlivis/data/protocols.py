"""Datasets, their splits, and the protocols (train / select / report) that models are trained under.

A `SplitRef` names one split of one dataset and the folder, relative to a data root, that holds the
dataset. `read_split` finds the split's file there in any official format. A `Protocol` says which
splits train a model, which one selects the checkpoint, and which ones are reported.

Two families:
- the reduced "-small" protocols over the shared data root (the splits that could be obtained;
  see ../shared/data/README.md), used for the shipped models;
- full-data protocols named after a dataset (snli, mnli, quora, xnli_en, mnli_hard), whose data root is
  the dataset's own folder as the user downloaded it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nlivis.data.readers import read_file
from nlivis.data.records import NLI_LABELS, PARAPHRASE_LABELS, ReadResult


@dataclass(frozen=True)
class SplitRef:
    """One split of one dataset; `subdir` is the dataset's folder relative to the data root ("" = the root)."""

    dataset: str
    split: str
    subdir: str = ""


@dataclass(frozen=True)
class Protocol:
    """Which splits train a model (`train`), pick its best checkpoint (`select`) and get reported (`report`).

    `small` marks the reduced protocols; `note` is the sentence the app prints next to every number
    obtained under this protocol.
    """

    name: str
    description: str
    labels: tuple[str, ...]
    train: tuple[SplitRef, ...]
    select: SplitRef
    report: tuple[SplitRef, ...]
    small: bool
    note: str


# File names each dataset's splits go by, relative to the dataset's folder, in order of preference.
# Every name is also looked for with `.gz` appended. A line-aligned split is found by its `s1.` file.
DATASET_FILE_PATTERNS: dict[str, tuple[str, ...]] = {
    "snli": ("snli_1.0_{split}.jsonl", "snli_1.0_{split}.txt", "s1.{split}"),
    "mnli": ("multinli_1.0_{split}.jsonl", "multinli_1.0_{split}.txt", "s1.{split}"),
    "quora": ("{split}.tsv",),
    "xnli_en": ("xnli.{split}.en.genre.tsv",),
    # The hard subsets are one `test` split in each of the folders matched/ and mismatched/.
    "mnli_hard": ("{subset}/s1.test",),
}

DATASET_SPLITS: dict[str, tuple[str, ...]] = {
    "snli": ("train", "dev", "test"),
    "mnli": ("train", "dev_matched", "dev_mismatched"),
    "quora": ("train", "dev", "test"),
    "xnli_en": ("dev", "test"),
    "mnli_hard": ("matched_test", "mismatched_test"),
}

DATASET_LABELS: dict[str, tuple[str, ...]] = {
    "snli": NLI_LABELS,
    "mnli": NLI_LABELS,
    "quora": PARAPHRASE_LABELS,
    "xnli_en": NLI_LABELS,
    "mnli_hard": NLI_LABELS,
}

SMALL_PROTOCOL_NOTE = (
    "Reduced protocol, not the papers' training data: trained on {train}, selected on {select}, "
    "reported on {report}. Numbers are not comparable with the papers' tables."
)
FULL_PROTOCOL_NOTE = "Full-data protocol: {train} for training, {select} for selection, {report} reported."
EVALUATION_PROTOCOL_NOTE = "Evaluation-only dataset: {report}; there is no training split, so models come from another protocol."


def split_key(ref: SplitRef) -> str:
    """A file-name-safe key for a split, e.g. "snli_dev", "mnli_hard_matched_test"."""
    return f"{ref.dataset}_{ref.split}"


def all_protocol_refs(protocol: Protocol) -> tuple[SplitRef, ...]:
    """Every split a protocol uses, each once, in the order train, select, report."""
    seen: dict[SplitRef, None] = {}
    for ref in (*protocol.train, protocol.select, *protocol.report):
        seen.setdefault(ref, None)
    return tuple(seen)


def _describe(refs: tuple[SplitRef, ...]) -> str:
    return " + ".join(f"{ref.dataset} {ref.split}" for ref in refs) or "nothing"


def _make_protocol(
    name: str,
    description: str,
    train: tuple[SplitRef, ...],
    select: SplitRef,
    report: tuple[SplitRef, ...],
    small: bool,
) -> Protocol:
    labels = {DATASET_LABELS[ref.dataset] for ref in (*train, select, *report)}
    if len(labels) != 1:
        raise ValueError(f"protocol {name!r} mixes label sets {sorted(labels)}")
    template = SMALL_PROTOCOL_NOTE if small else FULL_PROTOCOL_NOTE if train else EVALUATION_PROTOCOL_NOTE
    note = template.format(train=_describe(train), select=_describe((select,)), report=_describe(report))
    return Protocol(name, description, labels.pop(), train, select, report, small, note)


def _small_protocols() -> dict[str, Protocol]:
    snli_dev, snli_test = (SplitRef("snli", split, "snli/esnli_tokenized") for split in ("dev", "test"))
    xnli_dev, xnli_test = (SplitRef("xnli_en", split, "xnli_en") for split in ("dev", "test"))
    hard_matched, hard_mismatched = (SplitRef("mnli_hard", split, "mnli_hard") for split in DATASET_SPLITS["mnli_hard"])
    dev_matched, dev_mismatched = (SplitRef("mnli", split, "mnli_dev") for split in ("dev_matched", "dev_mismatched"))
    quora_dev, quora_test = (SplitRef("quora", split, "quora") for split in ("dev", "test"))
    protocols = (
        _make_protocol(
            "snli-small", "SNLI: train on the test split, select and report on dev (no SNLI training data here)",
            (snli_test,), snli_dev, (snli_dev,), small=True,
        ),
        _make_protocol(
            "mnli-small",
            "MultiNLI stand-in: train on XNLI-en test + SNLI test, select on XNLI-en dev, "
            "report on the full MultiNLI dev sets and their hard subsets (matched, mismatched; never trained on)",
            (xnli_test, snli_test), xnli_dev, (dev_matched, dev_mismatched, hard_matched, hard_mismatched), small=True,
        ),
        _make_protocol(
            "quora-small", "Quora (Wang et al. split): train on test, select and report on dev",
            (quora_test,), quora_dev, (quora_dev,), small=True,
        ),
    )
    return {protocol.name: protocol for protocol in protocols}


def _full_protocols() -> dict[str, Protocol]:
    def ref(dataset: str, split: str) -> SplitRef:
        return SplitRef(dataset, split, "")

    protocols = (
        _make_protocol(
            "snli", "SNLI 1.0: train on train, select on dev, report on test",
            (ref("snli", "train"),), ref("snli", "dev"), (ref("snli", "test"),), small=False,
        ),
        _make_protocol(
            "mnli", "MultiNLI 1.0: train on train, select on dev matched, report on dev matched and mismatched",
            (ref("mnli", "train"),), ref("mnli", "dev_matched"),
            (ref("mnli", "dev_matched"), ref("mnli", "dev_mismatched")), small=False,
        ),
        _make_protocol(
            "quora", "Quora (Wang et al. split): train on train, select on dev, report on test",
            (ref("quora", "train"),), ref("quora", "dev"), (ref("quora", "test"),), small=False,
        ),
        _make_protocol(
            "xnli_en", "XNLI 1.0 English dev and test (MultiNLI genres), for evaluation",
            (), ref("xnli_en", "dev"), (ref("xnli_en", "dev"), ref("xnli_en", "test")), small=False,
        ),
        _make_protocol(
            "mnli_hard", "MultiNLI dev hard subsets (Gururangan et al. 2018), matched and mismatched, for evaluation",
            (), ref("mnli_hard", "matched_test"),
            (ref("mnli_hard", "matched_test"), ref("mnli_hard", "mismatched_test")), small=False,
        ),
    )
    return {protocol.name: protocol for protocol in protocols}


PROTOCOLS: dict[str, Protocol] = {**_small_protocols(), **_full_protocols()}
"""Every protocol by name: the reduced ones (snli-small, mnli-small, quora-small) and one per dataset."""


def get_protocol(name: str) -> Protocol:
    """A protocol by name (snli-small, mnli-small, quora-small) or by dataset (snli, mnli, quora, xnli_en,
    mnli_hard, giving the full-data protocol)."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"unknown dataset or protocol {name!r}; known: {', '.join(PROTOCOLS)}") from None


def candidate_files(ref: SplitRef, data_root: str | Path) -> list[Path]:
    """The paths `read_split` tries for a split, in order of preference."""
    if ref.dataset not in DATASET_FILE_PATTERNS:
        raise ValueError(f"unknown dataset {ref.dataset!r}; known: {', '.join(DATASET_FILE_PATTERNS)}")
    if ref.split not in DATASET_SPLITS[ref.dataset]:
        raise ValueError(f"dataset {ref.dataset!r} has no split {ref.split!r}; its splits: {', '.join(DATASET_SPLITS[ref.dataset])}")
    folder = Path(data_root) / ref.subdir
    subset = ref.split.removesuffix("_test")
    names = [pattern.format(split=ref.split, subset=subset) for pattern in DATASET_FILE_PATTERNS[ref.dataset]]
    return [folder / file_name for name in names for file_name in (name, name + ".gz")]


def _looked_for(ref: SplitRef, data_root: str | Path) -> str:
    folder = Path(data_root) / ref.subdir
    names = [str(path.relative_to(folder)) for path in candidate_files(ref, data_root) if path.suffix != ".gz"]
    return f"looked in {folder} for {', '.join(names)} (each also as .gz)"


def find_split_file(ref: SplitRef, data_root: str | Path) -> Path | None:
    """The first existing file for the split, or None."""
    return next((path for path in candidate_files(ref, data_root) if path.is_file()), None)


GOLD_TAG_FILES: dict[tuple[str, str], str] = {
    ("mnli", "dev_matched"): "multinli_1.0_matched_annotations.txt",
    ("mnli", "dev_mismatched"): "multinli_1.0_mismatched_annotations.txt",
}
"""Splits with published human annotation tags (the RepEval 2017 release), keyed by (dataset, split)."""
GOLD_TAG_FOLDER = "mnli_annotations"
"""The release's folder name in the shared data root (see ../shared/data/README.md)."""


def gold_tag_file(ref: SplitRef, data_root: str | Path) -> Path | None:
    """The split's published annotation-tag file, looked for beside the split's file, in
    `mnli_annotations/` of the data root and of the split's folder; None when absent or not published."""
    name = GOLD_TAG_FILES.get((ref.dataset, ref.split))
    if name is None:
        return None
    folder = Path(data_root) / ref.subdir
    candidates = (folder / name, Path(data_root) / GOLD_TAG_FOLDER / name, folder / GOLD_TAG_FOLDER / name)
    return next((path for path in candidates if path.is_file()), None)


def local_splits(data_root: str | Path) -> dict[str, SplitRef]:
    """Split key (e.g. "snli_dev") → SplitRef for every split of the reduced protocols found under `data_root`."""
    found: dict[str, SplitRef] = {}
    for protocol in PROTOCOLS.values():
        if protocol.small:
            for ref in all_protocol_refs(protocol):
                if find_split_file(ref, data_root) is not None:
                    found.setdefault(split_key(ref), ref)
    return found


def read_split(ref: SplitRef, data_root: str | Path) -> ReadResult:
    """Read one split from `data_root/ref.subdir`, in whichever official format is there."""
    path = find_split_file(ref, data_root)
    if path is None:
        raise FileNotFoundError(f"{ref.dataset} {ref.split}: no file found; {_looked_for(ref, data_root)}")
    result = read_file(path)
    expected = set(DATASET_LABELS[ref.dataset])
    unexpected = {pair.label for pair in result.pairs} - expected
    if unexpected:
        raise ValueError(f"{path}: labels {sorted(map(str, unexpected))} do not belong to {ref.dataset} (expected {sorted(expected)})")
    return result


def available_splits(protocol: Protocol, data_root: str | Path) -> tuple[SplitRef, ...]:
    """The protocol's splits that have a file under `data_root` (prepare skips the others)."""
    return tuple(ref for ref in all_protocol_refs(protocol) if find_split_file(ref, data_root) is not None)


def require_training_splits(protocol: Protocol, data_root: str | Path) -> None:
    """Raise a clear error unless the protocol can train: it has training splits and all its splits exist."""
    if not protocol.train:
        raise ValueError(f"protocol {protocol.name!r} is for evaluation only: it has no training split")
    found = set(available_splits(protocol, data_root))
    missing = [ref for ref in all_protocol_refs(protocol) if ref not in found]
    if missing:
        details = "; ".join(f"{ref.dataset} {ref.split} ({_looked_for(ref, data_root)})" for ref in missing)
        raise FileNotFoundError(f"protocol {protocol.name!r} needs splits that are not in {data_root}: {details}")


def resolve_split(dataset: str, split: str):
    """The `SplitRef` for `--dataset D --split S`: a protocol's split by name or key, or a dataset's split."""
    protocol = get_protocol(dataset)
    refs = all_protocol_refs(protocol)
    for ref in refs:
        if split in (ref.split, split_key(ref)):
            return ref
    if protocol.small:
        known = sorted({r.split for r in refs} | {split_key(r) for r in refs})
        raise ValueError(f"protocol {dataset!r} has no split {split!r}; its splits: {', '.join(known)}")
    return SplitRef(dataset, split, "")
