"""The audit's use case: read SNLI dev and the judged set, draw what is to be judged with today's engine
(`analysis.audit`), and say how right the engine is where it was judged, what waits for a judgement and
which judgements no longer apply.

`python -m nlivis audit` and the audit tests share `run_audit`; reading is injected (`read_dev`) so the
tests can run it on pairs of their own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from nlivis.analysis.audit import (AUDIT_SEED, CASES_PER_TEST, COUNTERPARTS_OFF, EDITS_PER_STRATUM,
                                   FLOOR_MIN_CASES, GRAMMATICAL_FLOOR, LABEL_FLOOR, Drawn, audit_summary,
                                   draw_counterparts, draw_dev_cases, draw_edits, draw_template_cases,
                                   pending_items, proposed_case_keys, proposed_counterpart_keys,
                                   proposed_edit_keys, stale_sources)
from nlivis.analysis.edit_filters import OFF_BY_DEFAULT
from nlivis.analysis.probes import switched_off_tests
from nlivis.data.audit_set import (AUDIT_FOLDER, COUNTERPARTS_FILE, EDITS_FILE, PROBES_FILE, AuditItem,
                                   read_audit_file)
from nlivis.data.protocols import SplitRef, find_split_file, read_split, split_key

SNLI_DEV = SplitRef("snli", "dev", "snli/esnli_tokenized")
SECTIONS = {"edits": (EDITS_FILE, "by_kind"), "probes": (PROBES_FILE, "by_test"),
            "counterparts": (COUNTERPARTS_FILE, "by_stratum")}
"""Audit section → (its file in the audit folder, the key of its per-stratum table)."""

DevReader = Callable[[str | Path], list[tuple[str, object]]]


def read_snli_dev(data_dir: str | Path) -> list[tuple[str, object]]:
    """(split key, Pair) of SNLI dev's labelled pairs; ValueError saying where it was looked for when the
    split is not under `data_dir`."""
    if find_split_file(SNLI_DEV, data_dir) is None:
        raise ValueError(f"--data-dir {data_dir}: no SNLI dev under it (the audit regenerates its items from "
                         f"{SNLI_DEV.subdir}/ by pair id)")
    key = split_key(SNLI_DEV)
    return [(key, pair) for pair in read_split(SNLI_DEV, data_dir).pairs if pair.label is not None]


@dataclass(frozen=True)
class AuditRun:
    """The drawn items and the judged set of each section ("edits", "probes")."""

    drawn: dict[str, list[Drawn]]
    judged: dict[str, list[AuditItem]]
    proposed: dict[str, set[tuple[str, str, str]]] = field(default_factory=dict)
    """Per section, the keys of what the engine proposes where a judgement is stale (`proposed_edit_keys`)."""

    def summary(self) -> dict:
        """The `audit --json` record: per section `{judged, label_precision, grammatical, by_kind | by_test,
        drawn, pending, stale}`, with the seed and the floors."""
        off = {"edits": OFF_BY_DEFAULT, "probes": switched_off_tests(), "counterparts": COUNTERPARTS_OFF}
        record = {section: audit_summary(self.drawn[section], self.judged[section], by,
                                         self.proposed.get(section, set()), off[section])
                  for section, (_, by) in SECTIONS.items() if section in self.drawn}
        return {**record, "seed": AUDIT_SEED,
                "floors": {"label_precision": LABEL_FLOOR, "grammatical": GRAMMATICAL_FLOOR,
                           "min_cases": FLOOR_MIN_CASES}}

    def pending(self, section: str) -> list[Drawn]:
        return pending_items(self.drawn[section], self.judged[section])


def draw(section: str, dev: Sequence[tuple[str, object]]) -> list[Drawn]:
    if section == "edits":
        return draw_edits(dev, EDITS_PER_STRATUM)
    if section == "counterparts":
        return draw_counterparts(dev)
    return draw_template_cases(CASES_PER_TEST) + draw_dev_cases(dev, CASES_PER_TEST)


def read_judged(sections: Sequence[str] = tuple(SECTIONS), audit_folder: str | Path = AUDIT_FOLDER
                ) -> dict[str, list[AuditItem]]:
    """The judged set of each of `sections`, from its file in `audit_folder` (a bad line: ValueError naming file
    and line); nothing is drawn, so no dev data is read."""
    return {section: read_audit_file(Path(audit_folder) / SECTIONS[section][0]) for section in sections}


def run_audit(data_dir: str | Path, sections: Sequence[str] = tuple(SECTIONS),
              audit_folder: str | Path = AUDIT_FOLDER, read_dev: DevReader = read_snli_dev) -> AuditRun:
    """Draw `sections` from the dev pairs `read_dev(data_dir)` gives and read their judgements from
    `audit_folder` (a bad line: ValueError naming file and line)."""
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown audit section(s) {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    judged = read_judged(sections, audit_folder)
    dev = read_dev(data_dir)
    drawn = {section: draw(section, dev) for section in sections}
    find = {"edits": proposed_edit_keys, "probes": proposed_case_keys, "counterparts": proposed_counterpart_keys}
    proposed = {section: find[section](stale_sources(drawn[section], judged[section]), dev) for section in sections}
    return AuditRun(drawn, judged, proposed)
