"""One shape for every analysis a person runs on loaded models (LIT's lesson: the same interface for every
interpreter, so a new one plugs into the app's lists, the CLI's `--json` and the notebook API the same way).

An analysis declares what it is run on (its `subject`: checkpoints, one checkpoint and a typed pair, or one
checkpoint and a split's sample), which trace entry types it reads from a model (`needs`; empty when it reads
only the output distribution), the dataclass of its options (each field with its `nlivis.data.flags.Flag`, so
the command line's flags and `--help` follow from it), `run`, which returns a typed result that says itself as a
JSON-ready record, and optionally `rows`, the result as `ListRow`s of the app's pair lists.

Registering an `AnalysisSpec` in `ANALYSES` is all a new analysis needs: the one command-line runner
(`nlivis.cli.analyses`) gives it a command with its flags and `--json`, the app's one list component
(`lists.analysis_list`) lists its rows, and `run_analysis` runs it from a notebook. The declarations import no
torch (`run` is named, not imported), so `python -m nlivis --help` stays quick; the built-in ones are in
`nlivis.workflows.specs`."""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from nlivis.data.flags import flag_name, flagged_fields
from nlivis.data.text import shown

SUBJECTS = {
    "checkpoints": "one or more checkpoints (`subjects.Checkpoints`)",
    "pair": "one checkpoint and a typed premise / hypothesis (`subjects.TypedPair`)",
    "split": "one checkpoint and the analysed pairs of a split (`subjects.SplitSample`)",
}
"""What an analysis can be run on; `nlivis.workflows.subjects` holds each as a dataclass, and the command line
reads each from its own positional arguments and flags."""
TAKEN_FLAGS = {"checkpoints": ("--json",), "pair": ("--json", "--premise", "--hypothesis"),
               "split": ("--json", "--dataset", "--split", "--data-dir", "--cache-dir")}
"""The flags the command line gives each subject (and `--json`), which an analysis's options may not reuse."""

Progress = Callable[[str], None]
"""Where a run says each step (a line of text)."""


def stderr_progress(message: str) -> None:
    """The command line's progress: one line on stderr (escaped: it may name a user's file), flushed."""
    print(shown(message, keep_newlines=True), file=sys.stderr, flush=True)


class AnalysisResult(Protocol):
    """What every analysis returns: a typed result that also says itself as one JSON-ready record."""

    def record(self) -> dict[str, Any]:
        ...


@dataclass(frozen=True)
class ListRow:
    """One line of a pair list an analysis gives: the pair (its id; for a split pair its split key and 0-based
    row in the local split, None where it is typed or not in the local copy), the columns shown beside it
    (a typed pair's premise, hypothesis and gold label among them), and the number the list sorts by."""

    pair_id: str
    split: str | None
    row: int | None
    columns: Mapping[str, Any]
    score: float


RowsOf = Callable[[Any, Mapping[str, str]], list[ListRow]]
"""(result, the list's selection fields, e.g. {"test": …, "model": …}) → the rows of that list."""


@dataclass(frozen=True)
class AnalysisSpec:
    """An analysis as the app, the CLI and notebooks see it.

    name: the one spelling used in list links and JSON ("attribution", "faithfulness", ...).
    command: its command (`python -m nlivis <command>`); summary: the command's one line of help.
    subject: a key of `SUBJECTS`: what it is run on.
    needs: the names of the trace entry types (`nlivis.models.trace`) a model must declare for it to apply.
    options: the dataclass of its options, each with a documented default and (for the command line) a `Flag`.
    run: "module:function" of `function(subject, options, progress) -> result`, imported when first run.
    rows: the result as the rows of a pair list (None: the analysis gives no pair list, e.g. one pair's scores).
    score: what the rows' number is, the name of its column in a list.
    describe: a list's one-line description from its selection fields (None: the analysis and its models).
    where: where in the app a person runs it (said when a list link finds no run in the server)."""

    name: str
    command: str
    summary: str
    subject: str
    needs: frozenset[str]
    options: type
    run: str
    rows: RowsOf | None = None
    score: str = "score"
    describe: Callable[[Mapping[str, str]], str] | None = None
    where: str = ""

    def __post_init__(self) -> None:
        if self.subject not in SUBJECTS:
            raise ValueError(f"analysis {self.name!r}: subject {self.subject!r} is not one of {', '.join(SUBJECTS)}")
        if ":" not in self.run:
            raise ValueError(f"analysis {self.name!r}: run {self.run!r} is not 'module:function'")

    def applies_to(self, trace_types: frozenset[type]) -> bool:
        """Whether a model that declares `trace_types` can be analysed (every needed type declared)."""
        return self.needs <= {kind.__name__ for kind in trace_types}

    def runner(self) -> Callable[[Any, Any, Progress], AnalysisResult]:
        """The workflow function `run` names (imported now: it may load torch)."""
        module, function = self.run.split(":")
        return getattr(importlib.import_module(module), function)


ANALYSES: dict[str, AnalysisSpec] = {}


def register_analysis(spec: AnalysisSpec) -> AnalysisSpec:
    """Add `spec` to `ANALYSES`; a name or command registered twice, or an option whose flag the command line
    already gives (`TAKEN_FLAGS`), is a programming error."""
    if spec.name in ANALYSES or any(other.command == spec.command for other in ANALYSES.values()):
        raise ValueError(f"analysis {spec.name!r} (command {spec.command!r}) registered twice")
    taken = sorted(set(TAKEN_FLAGS[spec.subject]) & {flag_name(item) for item, _ in flagged_fields(spec.options)})
    if taken:
        raise ValueError(f"analysis {spec.name!r}: its options' flags {', '.join(taken)} are the command line's own "
                         f"for {SUBJECTS[spec.subject]}")
    ANALYSES[spec.name] = spec
    return spec


def run_analysis(name: str, subject: Any, options: Any = None, progress: Progress = lambda message: None) -> Any:
    """The notebook API: run registered analysis `name` on `subject` (a `workflows.subjects` dataclass) with
    `options` (None: the options' defaults, where every field has one)."""
    spec = ANALYSES[name]
    return spec.runner()(subject, spec.options() if options is None else options, progress)
