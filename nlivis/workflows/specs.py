"""The analyses nlivis ships, declared once (`protocol.AnalysisSpec`): attribution, faithfulness, edits, the
behavioural probes and projections, with their options dataclasses and how their results become pair-list
rows. This module imports no torch: the command line builds every command's `--help` from it, and each run
function is imported only when it runs.

The package `nlivis.workflows` imports this module, so importing any workflow registers these. A new analysis is
one more `register_analysis(AnalysisSpec(...))` (here, or in any module imported before the command line or the
app reads `ANALYSES`)."""
from __future__ import annotations

from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any, Mapping

from nlivis.analysis.edit_runs import EditOptions, EditRun
from nlivis.analysis.method_names import (ATTRIBUTION_INPUTS, DEFAULT_INPUT, FAITHFULNESS_METHODS, METHODS,
                                          RANDOM_PERMUTATIONS)
from nlivis.analysis.probes import DEFAULT_CASES_PER_TEST
from nlivis.analysis.projection import METHODS as PROJECTION_METHODS
from nlivis.data.flags import comma_separated, option
from nlivis.workflows.protocol import AnalysisSpec, ListRow, register_analysis

STEPS_HELP = ("integrated-gradients steps, fixed (default: adaptive — 50 steps, doubled up to 1600 for a pair whose "
              "completeness gap is ≥ 0.05; see nlivis.analysis.attribution)")
ATTRIBUTE_AT_HELP = ("where gradients and integrated gradients attribute: token_features (each token's whole input "
                     "representation — word vector, char CNN, POS, exact match, as the model reads it — from a removed "
                     "token's representation, as deletion removes it) or word_vectors (the word vectors only, the other "
                     "features held at their values; the earlier default)")


def one_method(text: str) -> tuple[str, ...]:
    """`explain --method`: one method asked for."""
    return (text,)


@dataclass(frozen=True)
class ExplainOptions:
    """methods: of `attribution.METHODS` (the command line asks for one); target: the class to explain, a class
    index or one of the model's labels (None: the predicted class); steps: integrated gradients' fixed step count
    (None: adaptive from `attribution.DEFAULT_STEPS`); at: where gradients attribute (`ATTRIBUTION_INPUTS`)."""

    methods: tuple[str, ...] = option(
        METHODS, "attribution method: integrated_gradients | gradient | grad_x_input | occlusion | attention",
        name="--method", type=one_method, cli_default="integrated_gradients")
    target: int | str | None = option(None, "class to explain, as a label or index (default: the predicted class)")
    steps: int | None = option(None, STEPS_HELP, type="ig_steps")
    at: str = option(DEFAULT_INPUT, ATTRIBUTE_AT_HELP, name="--attribute-at", choices=ATTRIBUTION_INPUTS)


@dataclass(frozen=True)
class FaithfulnessOptions:
    """sample: pairs drawn from the split (None: all); seed: of the sample, the random ranking and the bootstrap;
    methods: of `FAITHFULNESS_METHODS`; steps: integrated gradients' fixed step count (None: adaptive from
    `faithfulness.IG_START_STEPS`); at: as `ExplainOptions`'; permutations: random rankings per pair
    in the floor; highlights: the e-SNLI highlights file (None: found beside the split's folder); progress_bar:
    whether a run shows one (the command line's `--no-progress` turns it off)."""

    sample: int | None = option(500, "pairs drawn from the split by --seed", type="positive_int")
    seed: int = option(1, "seed of the sample, the random ranking and the bootstrap", type="seed")
    methods: tuple[str, ...] = option(
        FAITHFULNESS_METHODS, "comma-separated subset of integrated_gradients,gradient,grad_x_input,occlusion,"
        "attention,random (default: all)", type=comma_separated)
    steps: int | None = option(None, STEPS_HELP, type="ig_steps")
    at: str = option(DEFAULT_INPUT, ATTRIBUTE_AT_HELP, name="--attribute-at", choices=ATTRIBUTION_INPUTS)
    permutations: int = option(RANDOM_PERMUTATIONS, "random rankings per pair averaged into the random floor",
                               type="positive_int")
    highlights: str | Path | None = option(None, "e-SNLI highlights file (default: esnli_highlights/ under "
                                                 "--data-dir or up to two folders above)")
    progress_bar: bool = option(True, "no progress bar", name="--no-progress")


@dataclass(frozen=True)
class ProbeOptions:
    """A suite run: which suite, the data root its dev-built tests edit (None: template tests only), cases per
    test, the seed of sampling and dev-pair order, the cache folder (None: the cache root), and whether the tests
    switched off by default run too (`probes.switched_off_tests`: built from edit kinds whose audited precision
    is short of the targets)."""

    suite: str = option(MISSING, "which suite to run", choices=("nli", "paraphrase"), required=True)
    data_dir: str | Path | None = option(
        None, "data root holding the dev sets the INV / DIR tests edit (snli/esnli_tokenized and mnli_dev for nli, "
        "quora for paraphrase, as in ../shared/data) and the checkpoints' training splits for the overlap count "
        "(default: none — template tests only)")
    per_test: int = option(DEFAULT_CASES_PER_TEST, "at most this many cases per test (default: 110, "
                                                   "nlivis.analysis.probes.DEFAULT_CASES_PER_TEST)",
                           name="--max-cases", type="positive_int")
    seed: int = option(1, "seed of the template sampling and the dev-pair order", type="seed")
    cache_dir: str | Path | None = option(None, "folder for the built suite and the spaCy feature cache "
                                                "(default: ~/.cache/nlivis, or $NLIVIS_CACHE_DIR)")
    include_off: bool = option(False, "also run the tests switched off by default because the hand-judged audit "
                                      "found their expected labels or grammar short of the targets (python -m nlivis "
                                      "audit; default: off, and --json lists them under switched_off)")


@dataclass(frozen=True)
class ProjectionOptions:
    """A projection: the name of the sample it lays out (the cache entry, e.g. "snli_dev-sample1000"), UMAP or
    PCA, UMAP's seed, and the cache folder (None: `projection.default_cache_dir()`)."""

    sample: str = option(MISSING, "the name the layout is cached under, e.g. snli_dev-all", required=True)
    method: str = option("umap", "the 2-D layout", choices=PROJECTION_METHODS)
    seed: int = option(0, "UMAP's seed", type="seed")
    cache_dir: str | Path | None = None


def edit_rows(run: EditRun, selection: Mapping[str, str]) -> list[ListRow]:
    """Every edit of the run as a typed pair: kind, side, change, and each checkpoint's label after the edit
    (* where it changed), sorted by how many checkpoints changed their answer."""
    rows = []
    for outcome in run.outcomes:
        edit = outcome.edit
        columns: dict[str, Any] = {"premise": edit.premise, "hypothesis": edit.hypothesis,
                                   "gold": edit.expected if edit.expectation == "label" else None,
                                   "kind": edit.kind, "side": edit.side}
        for name in run.names:
            label = run.labels[int(outcome.probabilities[name].argmax())]
            columns[name] = label + ("*" if outcome.flipped[name] else "")
        flipped = sum(outcome.flipped.values())
        rows.append(ListRow("", None, None, {**columns, "changed": flipped}, float(flipped)))
    return rows


def failing_case_rows(run: Any, selection: Mapping[str, str]) -> list[ListRow]:
    """The failing cases of behavioural test `selection["test"]` for checkpoint `selection["model"]` (a
    `workflows.probes.ProbeRun`), each a typed pair with the gold label where the case expects a label; with
    `selection["versus"]`, only those that checkpoint passes (a before → after report's regression)."""
    test, name, versus = selection.get("test", ""), selection.get("model", ""), selection.get("versus")
    failing = run.failing(test, name)
    passed_by = run.failing(test, versus) if versus else []
    if failing is None or passed_by is None:
        raise ValueError(f"the suite has no test “{test}” for {name if failing is None else versus}")
    also_failing = {failure.index for failure in passed_by}
    rows = []
    for failure in (f for f in failing if f.index not in also_failing):
        case = failure.case
        original = case.original or ("", "")
        is_label = case.expectation == "label"
        rows.append(ListRow("", None, None, {
            "case": failure.index, "premise": case.premise, "hypothesis": case.hypothesis,
            "gold": case.expected if is_label else None,
            "expected": case.expected if is_label
            else case.expectation + (f" ({case.direction} {case.expected})" if case.direction else ""),
            "predicted": failure.predicted, "before edit": failure.original_predicted or "",
            "original premise": original[0], "original hypothesis": original[1], "source": case.source},
            float(failure.index)))
    return rows


ATTRIBUTION = register_analysis(AnalysisSpec(
    "attribution", "explain", "per-token salience of one pair (gradients, integrated gradients, occlusion, attention)",
    "pair", frozenset(), ExplainOptions, "nlivis.workflows.explain:explain_subject"))
"""Attribution needs no trace type: the gradient methods and occlusion read only the model's output distribution
and gradients; attention (which reads `Alignment` and `MemoryKeys` entries) is left out of the result for a model
that traces none instead of excluding the model. One pair's scores make no pair list."""
FAITHFULNESS = register_analysis(AnalysisSpec(
    "faithfulness", "faithfulness", "ERASER comprehensiveness/sufficiency, attention agreement and plausibility "
    "over a split", "split", frozenset(), FaithfulnessOptions, "nlivis.workflows.faithfulness:faithfulness_subject"))
"""Faithfulness needs no trace type (attention is reported as unavailable for a model that traces none); its
result is a summary over the sample, not a pair list."""
EDITS = register_analysis(AnalysisSpec(
    "edits", "edits", "propose minimal edits of a pair (WordNet substitutions, negation, quantifiers, numbers, names, "
    "gender, swap, typo), each with what logic expects, and predict the original and every edit with each checkpoint",
    "checkpoints", frozenset(), EditOptions, "nlivis.workflows.edits:edits_subject", edit_rows, "changed",
    where="the Edits page"))
"""Edits read only the output distribution: every model applies."""
PROBES = register_analysis(AnalysisSpec(
    "probes", "probe", "behavioural test suite (MFT / INV / DIR tests by capability): failure rates with Wilson "
    "intervals per checkpoint, McNemar between checkpoints, the failing cases", "checkpoints", frozenset(),
    ProbeOptions, "nlivis.workflows.probes:probes_subject", failing_case_rows, "case",
    lambda selection: f"{selection.get('model', '')}'s failing cases of the behavioural test “{selection.get('test', '')}”"
    + (f" that {selection['versus']} passes" if selection.get("versus") else ""),
    "Error analysis's Behavioural tests tab"))
"""The suite reads only the output distribution: every model applies."""
PROJECTION = register_analysis(AnalysisSpec(
    "projection", "projection", "a 2-D layout (UMAP or PCA) of a checkpoint's pooled pair vectors over a split, "
    "with its class probabilities", "split", frozenset({"Representation"}), ProjectionOptions,
    "nlivis.workflows.projection:projection_subject"))
"""A projection lays out the pooled pair vector: models whose trace has a `Representation` entry. Its result
holds coordinates without the pairs; the app's projection list joins them (`projection_table`)."""
