"""Explain one typed pair: which tokens decide a loaded checkpoint's answer, by every requested attribution
method (`analysis.attribution.explain_pair`), from text analysed by the one typed-text route
(`features.dataset.analysed_text_pair`).

`python -m nlivis explain` and the app's Attribution page both call `explain`."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import nlivis.features
import nlivis.inference
import nlivis.models
from nlivis.analysis import attribution
from nlivis.analysis.attribution import TokenScores, explain_pair
from nlivis.features.spacy_pipeline import installed_pipeline_version
from nlivis.features.dataset import analysed_text_pair
from nlivis.data.text import whole_number
from nlivis.store.files import atomic_write_json, cache_root, file_digest, read_sealed
from nlivis.workflows.projection import checkpoint_fingerprint
from nlivis.workflows.protocol import Progress
from nlivis.workflows.specs import ExplainOptions
from nlivis.workflows.subjects import TypedPair

GRADIENT_METHODS = ("integrated_gradients", "gradient", "grad_x_input")
"""The methods that attribute at `ExplainOptions.at`."""


@dataclass
class Explanation:
    """Each method's `TokenScores` for one pair (a method the model cannot give, attention, is absent), with the
    model's labels to name the classes."""

    labels: tuple[str, ...]
    options: ExplainOptions
    scores: dict[str, TokenScores]

    def record_of(self, method: str) -> dict[str, Any]:
        """One method's tokens, scores, classes and notes as `explain --json` prints them (NaN left in)."""
        scores = self.scores[method]
        output: dict[str, Any] = {
            "method": method, "premise_tokens": scores.premise_tokens, "premise_scores": scores.premise_scores,
            "hypothesis_tokens": scores.hypothesis_tokens, "hypothesis_scores": scores.hypothesis_scores,
            "predicted": self.labels[scores.predicted], "target": self.labels[scores.target], "note": scores.note}
        if method in GRADIENT_METHODS:
            output["attribute_at"] = self.options.at
        if scores.completeness_gap is not None:
            output["completeness_gap"] = scores.completeness_gap
            output["completeness_difference"] = scores.completeness_difference
            output["completeness_gap_note"] = scores.completeness_note
            output["steps"] = scores.steps
            output["steps_adaptive"] = self.options.steps is None
        if scores.layers:
            output["layers"] = {name: {"premise_scores": p, "hypothesis_scores": h}
                                for name, (p, h) in scores.layers.items()}
        return output

    def record(self) -> dict[str, Any]:
        """`record_of` the one method asked for (what `explain --json` prints), or {method: record} for several."""
        if len(self.options.methods) == 1 and self.options.methods[0] in self.scores:
            return self.record_of(self.options.methods[0])
        return {method: self.record_of(method) for method in self.scores}


def explain(loaded: Any, premise: str, hypothesis: str, options: ExplainOptions = ExplainOptions()) -> Explanation:
    """Every requested method's token scores for a loaded checkpoint (`inference.LoadedCheckpoint`) on a typed
    pair. Text that cannot be analysed, an unknown method or a target that is neither a label nor a class index is
    a ValueError."""
    item = analysed_text_pair(premise, hypothesis)
    target = class_index(tuple(loaded.labels), options.target)
    scores = explain_pair(loaded.model, loaded.featurizer, item, options.methods, target=target,
                          steps=options.steps, at=options.at)
    return Explanation(tuple(loaded.labels), options, scores)




KEPT_FORMAT = 1
"""Part of every kept explanation's key: raised when what `TokenScores` holds changes."""


@lru_cache(maxsize=1)
def explanation_code_digest() -> str:
    """The digest of the code an explanation runs (the models, the featurizer, inference, the attribution methods
    and this module): a kept explanation is keyed by it, so changed code never answers from an earlier run. Read
    once per process, when an explanation is first asked for."""
    return file_digest((*Path(nlivis.models.__file__).parent.rglob("*.py"),
                        *Path(nlivis.features.__file__).parent.rglob("*.py"), Path(nlivis.inference.__file__),
                        Path(attribution.__file__), Path(__file__)))


def kept_path(loaded: Any, premise: str, hypothesis: str, options: ExplainOptions,
              cache_dir: str | Path | None = None) -> Path:
    """Where `explain_kept` keeps an explanation: keyed by the checkpoint's weights and config, the spaCy pipeline
    that analyses the text, the code (`explanation_code_digest`), the pair and the options."""
    key = json.dumps([KEPT_FORMAT, checkpoint_fingerprint(loaded.path), installed_pipeline_version(),
                      explanation_code_digest(), premise, hypothesis, list(options.methods), options.target,
                      options.steps, options.at])
    return cache_root(cache_dir) / "explanations" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def explain_kept(loaded: Any, premise: str, hypothesis: str, options: ExplainOptions = ExplainOptions(),
                 cache_dir: str | Path | None = None) -> Explanation:
    """`explain`, kept on disk as sealed JSON (`kept_path`) and read back the next time the same checkpoint, code,
    pair and options are asked for, in this process or after a restart: the Attribution page's first view after a
    launch explained its pair again each time — integrated gradients and spaCy's pipeline loaded for the text, 2.7
    of its 5 CPU s of script at load 7 (py-spy on the server). A kept file that is absent, damaged or unsealed is
    computed again; one that cannot be written leaves the explanation computed."""
    path = kept_path(loaded, premise, hypothesis, options, cache_dir)
    data = read_sealed(path)
    try:
        kept = json.loads(data) if data is not None else None
        if isinstance(kept, dict):
            scores = {method: TokenScores(**{**fields, "layers": {name: tuple(pair) for name, pair
                                                                  in fields.get("layers", {}).items()}})
                      for method, fields in kept.items()}
            return Explanation(tuple(loaded.labels), options, scores)
    except (TypeError, ValueError, AttributeError):
        pass  # not what this code keeps: computed again below
    explanation = explain(loaded, premise, hypothesis, options)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, {method: asdict(scores) for method, scores in explanation.scores.items()}, indent=None,
                          sealed=True)
    except OSError:
        pass  # a cache that cannot be written: the explanation stands
    return explanation


def class_index(labels: tuple[str, ...], target: int | str | None) -> int | None:
    """A target given as a label name or a class index (as a number or its digits); None keeps the predicted
    class."""
    if target is None or isinstance(target, int):
        return target
    if target in labels:
        return labels.index(target)
    try:
        index = whole_number(target)
    except ValueError:
        index = -1
    if 0 <= index < len(labels):
        return index
    raise ValueError(f"--target {target!r} is neither one of this model's labels {list(labels)} nor a class index")


def explain_subject(subject: TypedPair, options: ExplainOptions, progress: Progress) -> Explanation:
    """`explain` as the registered attribution analysis runs it; asking for one method the model cannot give
    (attention, without an attention trace) is a ValueError."""
    explanation = explain(subject.loaded, subject.premise, subject.hypothesis, options)
    missing = [method for method in options.methods if method not in explanation.scores]
    if len(options.methods) == 1 and missing:
        raise ValueError(f"{subject.loaded.path.name} traces no attention this method can use "
                         "(see nlivis.analysis.attribution)")
    return explanation
