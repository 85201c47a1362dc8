"""One shape for every analysis a person runs on loaded models (LIT's lesson: the same interface for every
interpreter, so a new one plugs into the app's lists, the CLI's `--json` and the notebook API the same way).

An analysis declares which trace entry types it reads from a model (`needs`; empty when it reads only the
output distribution), the dataclass of its options, and `run`, which returns a result that can say itself as a
JSON-ready record. Each analysis module registers its `AnalysisSpec` once in `ANALYSES`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol


class AnalysisResult(Protocol):
    """What every analysis returns: a typed result that also says itself as one JSON-ready record."""

    def record(self) -> dict[str, Any]:
        ...


@dataclass(frozen=True)
class AnalysisSpec:
    """An analysis as the app, the CLI and notebooks see it.

    name: the one spelling used in URLs, CLI commands and JSON ("attribution", "faithfulness", ...).
    needs: the trace entry types (`nlivis.models.trace`) a model must declare for the analysis to apply.
    options: the dataclass of its options, each with a documented default.
    run: the workflow function; its result satisfies `AnalysisResult`."""

    name: str
    needs: frozenset[type]
    options: type
    run: Callable[..., AnalysisResult]

    def applies_to(self, trace_types: frozenset[type]) -> bool:
        """Whether a model that declares `trace_types` can be analysed (every needed type declared)."""
        return self.needs <= trace_types


ANALYSES: dict[str, AnalysisSpec] = {}


def register_analysis(spec: AnalysisSpec) -> AnalysisSpec:
    """Add `spec` to `ANALYSES`; a name registered twice is a programming error."""
    if spec.name in ANALYSES:
        raise ValueError(f"analysis {spec.name!r} registered twice")
    ANALYSES[spec.name] = spec
    return spec
