"""The Error analysis page's challenge-set section (issue 15), headless with AppTest: a file by path, the
models side by side by category with intervals, the pairs behind a number, the click into the Pair explorer,
and named evaluations kept apart from the recorded splits (issue 12 item 7)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("streamlit.testing.v1", reason="streamlit's AppTest is not installed")
from streamlit.testing.v1 import AppTest  # noqa: E402

from tests.fixtures.app_checkpoints import APP_DATA, train_variant  # noqa: E402
from tests.test_app_pages import list_lines, vega_specs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHALLENGE = Path(__file__).resolve().parent / "fixtures" / "challenge"
TIMEOUT = 900
"""AppTest's hang guard, as in tests/test_app_pages.py: only a hung run reaches it."""


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("app_challenge") / "checkpoints"
    train_variant(root, "gcnn")
    train_variant(root, "gcnn", seed=2)
    return root


def error_analysis(monkeypatch, tmp_path: Path, checkpoints: Path) -> AppTest:
    monkeypatch.setenv("NLIVIS_CHECKPOINTS", str(checkpoints))
    monkeypatch.setenv("NLIVIS_DATA", str(APP_DATA))
    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NLIVIS_WARM_UP", "0")
    monkeypatch.delenv("NLIVIS_RUNS", raising=False)
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    app.multiselect(key="home_selected").set_value(["gcnn-snli-small", "gcnn-snli-small-seed2"]).run()
    app.session_state["errors_tab"] = "Challenge set"
    app.switch_page(str(ROOT / "pages/5_Error_analysis.py")).run()
    assert not app.exception, app.exception
    return app


def shown(elements) -> str:
    """The text of the elements as the reader sees it (without the backslashes escaping file text from Markdown)."""
    return "\n".join(re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements)


def give_path(app: AppTest, path: Path) -> AppTest:
    """Choose "a path on this machine" (earlier named evaluations come first once there are some) and type it."""
    app.radio(key="errors_challenge_mode").set_value("a path on this machine").run()
    app.text_input(key="errors_challenge_path").set_value(str(path)).run()
    assert not app.exception, app.exception
    return app


def test_challenge_file_by_category_for_two_models(monkeypatch, tmp_path, checkpoints):
    from nlivis.store.predictions import find_prediction_files

    recorded = {p: p.read_bytes() for p in (checkpoints / "gcnn-snli-small").glob("predictions_*")}
    app = error_analysis(monkeypatch, tmp_path, checkpoints)
    give_path(app, CHALLENGE / "anli_like.csv")
    assert app.selectbox(key="errors_challenge_field").value == "tags"
    assert "Not evaluated on this file yet" in "\n".join(i.value for i in app.info)
    app.button(key="errors_challenge_run").click().run()
    assert not app.exception, app.exception

    wide = next(d.value for d in app.dataframe if "category" in d.value.columns)
    assert {"Basic", "Lexical", "Negation", "(all pairs)"} <= set(wide["category"])
    for model in ("gcnn-snli-small", "gcnn-snli-small-seed2"):
        cells = wide[f"{model} (%)"]  # "60.0 [23.1, 88.2]": accuracy and its Wilson interval, in % as everywhere
        parsed = cells.str.extract(r"([\d.]+) \[([\d.]+), ([\d.]+)\]").astype(float)
        assert len(parsed.dropna()) == len(wide) and ((parsed[1] <= parsed[0]) & (parsed[0] <= parsed[2])).all()
    assert wide.set_index("category").loc["Basic", "pairs"] == 2
    assert len(wide.columns) == 5  # category, pairs, majority, one column per model: not 20+
    figure = next(spec for spec in vega_specs(app) if spec["title"].startswith("accuracy by tags"))
    rule = next(layer for layer in figure["layer"] if layer["mark"]["type"] == "rule" and "x2" in layer["encoding"])
    low, high = rule["encoding"]["x"]["field"], rule["encoding"]["x2"]["field"]  # each dot's 95% interval
    rows = [row for row in figure["data"]["values"] if str(row.get("model")).startswith("gcnn")]
    assert {row["model"] for row in rows} == {"gcnn-snli-small", "gcnn-snli-small-seed2"}
    assert all(row[low] <= row["accuracy"] <= row[high] for row in rows)

    # the pairs behind "Lexical": u1 and u4
    app.selectbox(key="errors_challenge_group").set_value("Lexical").run()
    pairs = list_lines(app, "errors_challenge_pairs_table")
    assert set(pairs["id"]) == {"u1", "u4"} and "premise" in pairs.columns

    # named evaluations, apart from the recorded splits, which are untouched
    for model in ("gcnn-snli-small", "gcnn-snli-small-seed2"):
        assert len(list((checkpoints / model / "evaluations").iterdir())) == 1
    assert set(find_prediction_files(checkpoints / "gcnn-snli-small")) == {"snli_dev"}
    assert {p: p.read_bytes() for p in recorded} == recorded

    # the page again finds the stored evaluations without a button, and offers them as earlier evaluations
    app = error_analysis(monkeypatch, tmp_path, checkpoints)
    assert app.radio(key="errors_challenge_mode").value == "an earlier named evaluation"
    assert all("anli_like.csv (5 pairs" in option for option in app.selectbox(key="errors_challenge_earlier").options)
    assert "Not evaluated on this file yet" not in "\n".join(i.value for i in app.info)
    assert "named evaluation 'anli_like-" in shown(app.caption)


def test_a_bad_challenge_file_is_named(monkeypatch, tmp_path, checkpoints):
    bad = tmp_path / "bad.csv"
    bad.write_text("premise,hypothesis,label\nA man eats.,He sleeps.,maybe\n")
    app = error_analysis(monkeypatch, tmp_path, checkpoints)
    give_path(app, bad)
    assert f"{bad}, line 2" in shown(app.error)


def test_keep_upload_names_by_content_and_strips_paths(monkeypatch, tmp_path):
    from nlivis.store.uploads import keep_upload

    monkeypatch.setenv("NLIVIS_CACHE_DIR", str(tmp_path / "cache"))
    first = keep_upload("../../etc/ANLI r1 dev.csv", b"premise,hypothesis,label\n")
    assert first.name == "ANLI_r1_dev.csv" and first.is_relative_to(tmp_path / "cache" / "uploads")
    assert keep_upload("ANLI r1 dev.csv", b"premise,hypothesis,label\n") == first
    assert keep_upload("ANLI r1 dev.csv", b"other\n").parent != first.parent


def test_error_analysis_says_how_many_pairs_of_the_split_were_cut(monkeypatch, tmp_path, checkpoints):
    """Issue 12 item 15 in the app: the fixture's dev split has one 9-token hypothesis; the tiny model reads 8."""
    from nlivis.data.protocols import SplitRef
    from nlivis.features.dataset import load_split_analysed_reported

    def on_a_split_tab():  # the challenge-set tab has no split, so no truncation of one
        app = error_analysis(monkeypatch, tmp_path, checkpoints)
        app.session_state["errors_tab"] = "Accuracy and confusions"
        return app.run()

    app = on_a_split_tab()
    assert not app.exception, app.exception
    assert "is shown once the split has been analysed" in shown(app.caption)
    ref = SplitRef("snli", "dev", "snli/esnli_tokenized")
    load_split_analysed_reported(ref, APP_DATA, progress=False)  # NLIVIS_CACHE_DIR is the page's cache
    app = on_a_split_tab()
    captions = shown(app.caption)
    assert "on snli_dev: 1 of 12 pairs were cut to the model's 12 premise / 8 hypothesis tokens" in captions
    assert captions.count("on snli_dev: ") == 1 and "gcnn-snli-small, gcnn-snli-small-seed2 on snli_dev" in captions  # once


def test_pair_explorer_refuses_text_without_a_real_word(monkeypatch, tmp_path, checkpoints):
    """Issue 12 item 14 in the app: zero-width spaces, a BOM and NUL got a confident label."""
    app = error_analysis(monkeypatch, tmp_path, checkpoints)
    app.switch_page(str(ROOT / "pages/2_Pair_explorer.py")).run()
    app.text_area(key="explorer_premise").set_value("\u200b\ufeff\x00")
    app.button(key="explorer_analyse").click().run()
    assert not app.exception, app.exception
    shown = "\n".join(str(e.value) for kind in ("error", "warning", "info") for e in getattr(app, kind))
    assert "no real word" in shown, shown
    assert not app.get("plotly_chart")


def test_the_challenge_mode_is_in_the_url_even_at_its_default(monkeypatch, tmp_path, checkpoints):
    """Its default depends on what was evaluated before, so a link keeps it even when it is the default."""
    app = error_analysis(monkeypatch, tmp_path, checkpoints)
    mode = app.radio(key="errors_challenge_mode")
    assert mode.value == mode.options[0]
    assert app.query_params.get("challenge_mode") in (mode.value, [mode.value])


def test_the_label_scheme_scores_a_file_two_way_and_stays_in_the_url(monkeypatch, tmp_path, checkpoints):
    """Issue 28 §5 in the app: 2way merges neutral and contradiction in the gold labels and in the models' answers
    (folded from the 3-way named evaluation, nothing evaluated again), and the link keeps the scheme."""
    from nlivis.analysis.challenge import two_way_predictions
    from nlivis.store.predictions import read_predictions

    path = tmp_path / "two_way.csv"
    path.write_text("premise,hypothesis,label,kind\n"
                    "A man is playing a guitar .,A man plays music .,entailment,a\n"
                    "A man is playing a guitar .,A man is asleep .,contradiction,a\n"
                    "A dog runs in a park .,A dog is happy .,neutral,b\n"
                    "A dog runs in a park .,No dog moves .,contradiction,b\n")
    app = error_analysis(monkeypatch, tmp_path, checkpoints)
    give_path(app, path)
    app.button(key="errors_challenge_run").click().run()
    assert app.radio(key="errors_challenge_scheme").value == "3way" and "challenge_scheme" not in app.query_params
    app.radio(key="errors_challenge_scheme").set_value("2way").run()
    assert not app.exception, app.exception
    assert app.query_params.get("challenge_scheme") in ("2way", ["2way"])
    assert "Not evaluated on this file yet" not in "\n".join(i.value for i in app.info)
    wide = next(d.value for d in app.dataframe if "category" in d.value.columns).set_index("category")
    for model in ("gcnn-snli-small", "gcnn-snli-small-seed2"):
        stored = next((checkpoints / model / "evaluations").glob("two_way-*/predictions.jsonl.gz"))
        folded = two_way_predictions(read_predictions(stored))
        expected = 100 * sum(bool(p.correct) for p in folded) / len(folded)
        assert wide.loc["(all pairs)", f"{model} (%)"].startswith(f"{expected:.1f} [")
    pairs = list_lines(app, "errors_challenge_pairs_table")
    assert set(pairs["gold"]) <= {"entailment", "non-entailment"} and "non-entailment" in set(pairs["gold"])
    assert set(pairs["predicted"]) <= {"entailment", "non-entailment"}
