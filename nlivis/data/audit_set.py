"""The hand-judged audit set: one JSON object a line, a reviewer's judgement of one proposed edit or probe case.

The set (`AUDIT_FOLDER`: `edits.jsonl`, `probes.jsonl`, `counterparts.jsonl`) holds no dataset sentence. An item drawn from a dev
pair names the pair (`source`, "snli_dev:<pair id>") and the edit by its description ("hypothesis 3: court →
tribunal") and `fingerprint` (the first hex digits of the sha256 of the edited pair and its expectation,
`nlivis.analysis.audit.fingerprint`); the texts are made again from the data by id. A template case, written
by nlivis, keeps its `premise` and `hypothesis` whole. The judgement: `grammatical` (is the edited pair good
English), `label_right` (is what the engine expects of it right; null when the engine expects nothing),
`correct_label` (what the label should be when it is not right; null when no label is right either) and a
short `note`. A judgement belongs to the exact edit it judged: when the engine proposes something else, the
fingerprint differs and the new proposal waits for a judgement of its own. A second judge's judgements of some
of the same items, made blind, are kept apart in the same format (`second_judge*.jsonl`, `scripts/audit_review.py`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nlivis.data.records import NLI_LABELS

AUDIT_FOLDER = Path(__file__).with_name("audit")
EDITS_FILE, PROBES_FILE, COUNTERPARTS_FILE = "edits.jsonl", "probes.jsonl", "counterparts.jsonl"
TEMPLATE_SOURCE = "template"
NO_EXPECTATION = "none"
FINGERPRINT_LENGTH = 12
REQUIRED_KEYS = ("stratum", "source", "fingerprint", "change", "expects", "grammatical", "label_right",
                 "correct_label", "note")
TEXT_KEYS = ("premise", "hypothesis")
MAX_NOTE_CHARS = 200


@dataclass(frozen=True)
class Judgement:
    grammatical: bool
    label_right: bool | None
    """None: the engine expects nothing of the item, so there is no label to be right or wrong."""
    correct_label: str | None
    note: str = ""


@dataclass(frozen=True)
class AuditItem:
    """One judged item: which stratum (an edit kind or relation, or a probe test's name), where it comes from,
    which edit (`fingerprint`, `change` in words), what the engine expected (`expects`, "label entailment",
    "invariant", "direction entailment not_fall" or "none") and the judgement."""

    stratum: str
    source: str
    fingerprint: str
    change: str
    expects: str
    judgement: Judgement
    premise: str | None = None
    hypothesis: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return self.stratum, self.source, self.fingerprint


def _problem(data: object) -> str | None:
    """What is wrong with one decoded line (None: nothing)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    missing = [k for k in REQUIRED_KEYS if k not in data]
    unknown = [k for k in data if k not in REQUIRED_KEYS + TEXT_KEYS]
    if missing or unknown:
        return "; ".join(filter(None, [missing and f"missing {', '.join(missing)}",
                                       unknown and f"unknown key(s) {', '.join(unknown)}"]))
    for key in ("stratum", "source", "fingerprint", "change", "expects", "note"):
        if not isinstance(data[key], str) or (key != "note" and not data[key].strip()):
            return f"{key} must be a non-empty string" if key != "note" else "note must be a string"
    if len(data["note"]) > MAX_NOTE_CHARS:
        return f"note has {len(data['note'])} characters; at most {MAX_NOTE_CHARS}"
    if len(data["fingerprint"]) != FINGERPRINT_LENGTH or any(c not in "0123456789abcdef" for c in data["fingerprint"]):
        return f"fingerprint must be {FINGERPRINT_LENGTH} lower-case hex digits"
    if not isinstance(data["grammatical"], bool):
        return "grammatical must be true or false"
    return _label_problem(data) or _text_problem(data)


def _label_problem(data: dict) -> str | None:
    right, correct = data["label_right"], data["correct_label"]
    if data["expects"] == NO_EXPECTATION:
        return None if right is None and correct is None else \
            "an item that expects none has null label_right and correct_label"
    if not isinstance(right, bool):
        return "label_right must be true or false (null only when expects is none)"
    if correct is not None and correct not in NLI_LABELS:
        return f"correct_label must be null or one of {', '.join(NLI_LABELS)}"
    if right and correct is not None:
        return "correct_label must be null when label_right is true"
    return None


def _text_problem(data: dict) -> str | None:
    present = [k for k in TEXT_KEYS if k in data]
    if data["source"] == TEMPLATE_SOURCE:
        if len(present) != 2 or not all(isinstance(data[k], str) and data[k].strip() for k in TEXT_KEYS):
            return "a template item keeps its premise and hypothesis as non-empty strings"
    elif present:
        return "only template items keep text; a dev item names its pair in source"
    return None


def parse_audit_line(line: str, where: str) -> AuditItem:
    """One line of an audit file; ValueError "`where`: what is wrong" (`where` names file and line)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not JSON ({error.msg})") from None
    problem = _problem(data)
    if problem:
        raise ValueError(f"{where}: {problem}")
    judgement = Judgement(data["grammatical"], data["label_right"], data["correct_label"], data["note"])
    return AuditItem(data["stratum"], data["source"], data["fingerprint"], data["change"], data["expects"],
                     judgement, data.get("premise"), data.get("hypothesis"))


def audit_line(item: AuditItem) -> str:
    """The line `parse_audit_line` reads back as `item` (keys in a fixed order, no ASCII escapes)."""
    data = {"stratum": item.stratum, "source": item.source, "fingerprint": item.fingerprint, "change": item.change,
            "expects": item.expects}
    if item.source == TEMPLATE_SOURCE:
        data.update(premise=item.premise, hypothesis=item.hypothesis)
    judgement = item.judgement
    data.update(grammatical=judgement.grammatical, label_right=judgement.label_right,
                correct_label=judgement.correct_label, note=judgement.note)
    return json.dumps(data, ensure_ascii=False)


def read_audit_file(path: str | Path) -> list[AuditItem]:
    """Every item of an audit file (blank lines skipped); ValueError naming the file and line of the first bad
    line or of an item judged twice. A missing file is an empty set."""
    path = Path(path)
    if not path.is_file():
        return []
    items, seen = [], {}
    lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines(): a note may hold U+0085 or U+2028
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        item = parse_audit_line(line, where)
        if item.key in seen:
            raise ValueError(f"{where}: {item.stratum} {item.source} {item.fingerprint} is judged already on line "
                             f"{seen[item.key]}")
        seen[item.key] = number
        items.append(item)
    return items
