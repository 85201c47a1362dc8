"""The state module's values without a running app: how view values read and write in a URL, and what the pair
and its list put in one."""
from __future__ import annotations

import pytest

pytest.importorskip("streamlit", reason="streamlit is not installed")

from nlivis.app.state import DEFAULT_PAIR, ListRef, PairRef, clean_sentence, parse, serialise  # noqa: E402
from nlivis.app.text import code, md  # noqa: E402


@pytest.mark.parametrize("value", [True, False, 0, 42, 2.5, "snli_dev", ["gold", "automatic"], [0, 64, 128], []])
def test_view_values_round_trip_through_their_url_text(value):
    like = value if not isinstance(value, list) or value else [""]
    assert parse(serialise(value), like) == value


@pytest.mark.parametrize("text,like", [("maybe", True), ("x", 0), ("nan", 1.0), ("inf", 1.0), ("1,b", [0])])
def test_text_that_is_not_a_value_of_the_type_is_refused(text, like):
    with pytest.raises(ValueError):
        parse(text, like)


def test_a_pair_is_a_split_row_or_typed_text_in_the_url():
    assert PairRef(split="snli_dev", row=3).parameters() == {"split": "snli_dev", "pair": "3"}
    typed = PairRef(premise="  A  dog\nruns . ", hypothesis="An animal moves .", gold="entailment")
    assert typed.parameters() == {"premise": "A dog runs .", "hypothesis": "An animal moves .", "gold": "entailment"}
    assert not DEFAULT_PAIR.is_row and PairRef(split="x", row=0).is_row
    assert len(PairRef(premise="word " * 1000, hypothesis="h").parameters()["premise"]) == 2000
    assert clean_sentence("a " * 1500)[1] == "the sentence was cut to its first 2000 characters"


def test_a_list_keeps_its_fields_sorted_and_drops_empty_ones():
    listed = ListRef.of("predictions", split="snli_dev", model="esan-snli-small", tag=None, gold="")
    assert listed.fields == (("model", "esan-snli-small"), ("split", "snli_dev"))
    assert listed.parameters() == {"from": "predictions", "from.model": "esan-snli-small", "from.split": "snli_dev"}
    assert listed.with_fields(order="row").get("order") == "row" and listed.get("tag") is None


def test_markdown_escaping_leaves_no_link_image_or_formatting():
    from markdown_it import MarkdownIt

    hostile = "![x](http://nlivis-fetch-test.invalid/x.png) [y](http://z) **b** :red[c] <img src=x> www.q.com\n# h"
    tokens = MarkdownIt("commonmark").parse(md(hostile))
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"image", "link_open", "strong_open", "heading_open", "html_inline", "html_block"}
    rendered = MarkdownIt("commonmark").render(md(hostile))
    assert "x.png)" in rendered and "<img" not in rendered and "\n# h" not in md(hostile)
    shown = md(hostile).replace("\\", "")  # the text a GFM autolinker sees once the escapes are read
    assert "://" not in shown and "www." not in shown and "x.png)" in shown.replace("\u200b", "")


@pytest.mark.parametrize("value", ["/data/mnli_annotations/multinli_1.0_matched_annotations.txt", "a`b``c", "`x`",
                                   "![x](http://nlivis-fetch-test.invalid/x.png)", "two\nlines"])
def test_a_code_span_shows_a_path_literally_and_nothing_else(value):
    """A path in backticks was md()-escaped, so the page showed `\\/work\\/wt\\/…`."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(code(value))[1].children
    assert [t.type for t in tokens] == ["code_inline"]
    assert tokens[0].content == " ".join(value.splitlines())
