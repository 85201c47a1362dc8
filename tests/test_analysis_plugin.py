"""A new analysis plugs in by registering its spec (LIT's lesson: every interpreter has the same interface): the
command line's `--help` and `--json`, the notebook API and the app's pair lists serve it with no other code change.
And every registered analysis goes through those same generic paths."""
from __future__ import annotations

import argparse
import json
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nlivis.cli import HelpFormatter, analyses, build_parser, main
from nlivis.data.flags import default_of, flag_name, flagged_fields, option
from nlivis.workflows.protocol import ANALYSES, SUBJECTS, AnalysisSpec, ListRow, register_analysis, run_analysis

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = ROOT / "checkpoints" / "gcnn-snli-small"
SPLIT_FOLDER = ROOT / "tests" / "fixtures" / "app_data" / "snli" / "esnli_tokenized"


@dataclass(frozen=True)
class SampleOptions:
    """sample: the first pairs measured (an analysis of a split is handed its pairs)."""

    sample: int = option(6, "the first pairs of the split measured", type="positive_int")


@dataclass(frozen=True)
class NormOptions(SampleOptions):
    """data_dir: the folder of SNLI's split, which an analysis of checkpoints reads itself; split: its name."""

    data_dir: str = option("", "folder holding SNLI's split")
    split: str = option("dev", "split of SNLI")


@dataclass
class PairNorms:
    """Each pair's pooled-vector L2 norm per checkpoint (a per-pair statistic of the `Representation` entry)."""

    split: str
    ids: list[str]
    gold: list[str | None]
    norms: dict[str, list[float]]

    def record(self) -> dict[str, Any]:
        return {"split": self.split, "pairs": [{"id": pid, "norms": {name: values[i] for name, values in self.norms.items()}}
                                               for i, pid in enumerate(self.ids)]}


def measured(split: str, items: list, named: dict[str, Any]) -> PairNorms:
    from nlivis.workflows.projection import pooled_outputs

    norms = {name: np.linalg.norm(pooled_outputs(loaded, items).vectors, axis=1).round(5).tolist()
             for name, loaded in named.items()}
    return PairNorms(split, [item.pair.id for item in items], [item.pair.label for item in items], norms)


def checkpoints_norms(subject: Any, options: NormOptions, progress: Any) -> PairNorms:
    """Subject "checkpoints": the first pairs of the split read from `options.data_dir`."""
    from nlivis.data.protocols import resolve_split, split_key
    from nlivis.features.dataset import load_split_analysed

    ref = resolve_split("snli", options.split)
    items = load_split_analysed(ref, options.data_dir)[0][:options.sample]
    return measured(split_key(ref), items, dict(zip(subject.names, subject.loaded)))


def sample_norms(subject: Any, options: SampleOptions, progress: Any) -> PairNorms:
    """Subject "split": the first pairs of the pairs it is handed."""
    return measured(subject.split, subject.items[:options.sample], {Path(subject.loaded.path).name: subject.loaded})


def norm_rows(result: PairNorms, selection: dict[str, str]) -> list[ListRow]:
    first = next(iter(result.norms))
    return [ListRow(pid, result.split, row, {"gold": gold, **{name: values[row] for name, values in result.norms.items()}},
                    result.norms[first][row])
            for row, (pid, gold) in enumerate(zip(result.ids, result.gold))]


SUBJECT_RUNS = {"checkpoints": ("checkpoints_norms", NormOptions), "split": ("sample_norms", SampleOptions)}


@pytest.fixture(params=sorted(SUBJECT_RUNS))
def pair_norm_analysis(request, monkeypatch):
    """The analysis registered in this test, of checkpoints or of a split; the app's data is the fixture folder."""
    monkeypatch.setenv("NLIVIS_DATA", str(SPLIT_FOLDER.parents[1]))
    spec = register_analysis(AnalysisSpec(
        "pair_norm", "pair-norm", "each pair's pooled-vector norm", request.param, frozenset({"Representation"}),
        SUBJECT_RUNS[request.param][1], f"{__name__}:{SUBJECT_RUNS[request.param][0]}", norm_rows, "norm"))
    yield spec
    del ANALYSES[spec.name]


def test_a_registered_analysis_gets_a_command_with_its_documented_flags(pair_norm_analysis, capsys):
    with pytest.raises(SystemExit) as done:
        main(["pair-norm", "--help"])
    assert done.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "the first pairs of the split measured (default: 6)" in shown and "--sample SAMPLE" in shown
    assert "pair-norm" in build_parser().format_help()


def test_a_registered_analysis_runs_from_the_command_line_the_notebook_and_the_app_list(pair_norm_analysis, capsys):
    from nlivis.app.cache import analyses as cached_analyses
    from nlivis.app.components import lists
    from nlivis.app.state import ListRef
    from nlivis.workflows.subjects import Checkpoints, SplitSample

    of_split = pair_norm_analysis.subject == "split"
    where = (["--dataset", "snli", "--split", "dev", "--data-dir", str(SPLIT_FOLDER)] if of_split
             else ["--data-dir", str(SPLIT_FOLDER)])
    assert main(["pair-norm", str(CHECKPOINT), *where, "--sample", "4", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    options = SampleOptions(sample=4) if of_split else NormOptions(sample=4, data_dir=str(SPLIT_FOLDER))
    subject = (SplitSample.read(CHECKPOINT, "snli", "dev", SPLIT_FOLDER) if of_split
               else Checkpoints.read([CHECKPOINT]))
    direct = run_analysis("pair_norm", subject, options)
    assert printed == direct.record() and len(printed["pairs"]) == 4

    model, problem = lists.model_by_name(CHECKPOINT.name)
    assert problem is None
    sample = ("snli_dev", 12) if of_split else None  # the fixture's whole dev split, in the app's sample order
    fields = {"split": "snli_dev", "size": 12} if of_split else {}
    ref = ListRef.of("pair_norm", models=CHECKPOINT.name, run=cached_analyses.options_digest(options), **fields)
    assert "run this list comes from is not in this server" in (lists.resolve(ref).problem or "")
    run = cached_analyses.analysis_run("pair_norm", [model], options, sample)
    listed = lists.resolve(ref)
    assert listed.problem is None and listed.split_rows and len(listed.frame) == 4
    assert list(listed.frame["id"]) == run.ids and list(listed.frame[CHECKPOINT.name]) == run.norms[CHECKPOINT.name]
    assert listed.pair_at(2).row == 2 and listed.pair_at(2).split == run.split == "snli_dev"
    if not of_split:
        assert run.record() == direct.record()


def minimal_command_line(spec: AnalysisSpec) -> list[str]:
    """The fewest arguments the command takes: its subject's and its required flags' (a value each may take)."""
    words = {"checkpoints": ["a"], "pair": ["a", "--premise", "p", "--hypothesis", "h"],
             "split": ["a", "--dataset", "snli", "--split", "dev", "--data-dir", "d"]}[spec.subject]
    for item, flag in flagged_fields(spec.options):
        if flag.required:
            words += [flag_name(item), flag.choices[0] if flag.choices else "x"]
    return words


@pytest.mark.parametrize("name", sorted(ANALYSES))
def test_every_registered_analysis_goes_through_the_one_command_line_path(name):
    """Each shipped spec: a known subject, a runner that resolves, every option a documented flag, and the
    parsed command line gives the options dataclass with each flag's documented default."""
    spec = ANALYSES[name]
    assert spec.subject in SUBJECTS and callable(spec.runner())
    parser = argparse.ArgumentParser(formatter_class=HelpFormatter)
    analyses.add_arguments(parser, spec)
    help_text = "".join(parser.format_help().split())  # argparse wraps lines, also at a hyphen
    for item, flag in flagged_fields(spec.options):
        assert flag_name(item) in help_text and "".join(flag.help.split()) in help_text
    assert "--json" in help_text
    words = minimal_command_line(spec)
    options = analyses.options_of(spec, parser.parse_args(words))
    assert isinstance(options, spec.options)
    for item, flag in flagged_fields(spec.options):
        if not flag.required:
            expected = default_of(item, flag)
            if isinstance(expected, str) and flag.type is not None:  # argparse reads a text default by its type
                expected = analyses.argument_type(flag)(expected)
            assert getattr(options, item.name) == expected


def test_edits_rows_reach_the_one_list_component(wordnet):
    """A shipped analysis with rows, run by the app's one run store, listed by the one list component."""
    from nlivis.analysis.edit_runs import EditOptions
    from nlivis.app.cache import analyses as cached_analyses
    from nlivis.app.components import lists
    from nlivis.app.state import ListRef

    model, problem = lists.model_by_name(CHECKPOINT.name)
    assert problem is None
    options = EditOptions("A man is playing a guitar on stage.", "A man is playing an instrument.", "entailment")
    run, problem = cached_analyses.edit_run([model], options.premise, options.hypothesis, options.label)
    assert problem is None
    ref = ListRef.of("edits", models=CHECKPOINT.name, run=cached_analyses.options_digest(options))
    listed = lists.resolve(ref)
    assert listed.problem is None and not listed.split_rows and len(listed.frame) == len(run.outcomes) > 0
    assert list(listed.frame["hypothesis"]) == [outcome.edit.hypothesis for outcome in run.outcomes]
    assert set(listed.frame[CHECKPOINT.name].str.rstrip("*")) <= set(run.labels)
    assert listed.pair_at(0).premise == run.outcomes[0].edit.premise


def test_an_analysis_whose_option_reuses_a_flag_of_its_subject_is_refused_at_registration():
    """The clash would otherwise break every command's parser at `python -m nlivis --help`."""
    with pytest.raises(ValueError, match="flags --data-dir, --split are the command line.s own"):
        register_analysis(AnalysisSpec("pair_norm", "pair-norm", "each pair's pooled-vector norm", "split",
                                       frozenset(), NormOptions, f"{__name__}:sample_norms"))
    assert "pair_norm" not in ANALYSES
