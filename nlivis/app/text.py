"""Text from users and files, made safe to show through Streamlit's Markdown (st.markdown, st.caption,
st.warning, st.error, st.info, widget and expander labels).

A value from a URL, a typed sentence, a folder or file name is Markdown to Streamlit: `![x](http://host/x.png)`
would make the browser fetch that host, `[y](http://z)` show a foreign link, `**` or `:red[…]` restyle the page.
`md(value)` backslash-escapes every ASCII punctuation character (CommonMark lets any of them be escaped) and
turns line breaks into spaces, so the value reads as it was given; escapes do not stop Streamlit's GFM
autolinks (they are found in the text after escapes are read: `http\://host` still became a link to the
host), so a zero-width space is put inside `://`, `www.` and after `@`, which no reader sees. Compose messages
as `f"… {md(value)} …"`; a message that is plain text throughout (e.g. from `nlivis.app.state` or an
exception) goes through `md` whole. `code(value)` shows a
value (a path, a config name) as a code span: nothing inside one is Markdown, so it is not escaped (escapes
there would show as backslashes). `short_names` shortens checkpoint names for table
headers.
"""
from __future__ import annotations

import re
from os.path import commonprefix
from typing import Any, Sequence

_PUNCTUATION = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
_AUTOLINK = re.compile(r"://|(?i:www)\.|@.")
"""What GFM turns into a link by itself (a scheme's `://`, `www.`, an e-mail's `@`): a zero-width space goes
before the last character of each."""
_NO_LINK = "\u200b"


def md(value: Any) -> str:
    """`value` as Markdown that renders as the literal text (no links, images, formatting or directives)."""
    text = " ".join(str(value).splitlines()) if value is not None else ""
    text = _AUTOLINK.sub(lambda found: found.group(0)[:-1] + _NO_LINK + found.group(0)[-1], text)
    return _PUNCTUATION.sub(r"\\\1", text)


def short_names(names: Sequence[str]) -> dict[str, str]:
    """Column labels without the suffix every name shares ("gcnn" for "gcnn-snli-small" beside "esan-snli-small"),
    so five models fit in a table's width; the full name goes in the column's tooltip."""
    if len(names) < 2:
        return {name: name for name in names}
    cut = commonprefix([name[::-1] for name in names])[::-1]
    cut = cut[cut.find("-"):] if "-" in cut else ""  # cut at a dash, never inside a name
    shown = {name: name[:len(name) - len(cut)] if cut and name.endswith(cut) else name for name in names}
    return shown if len(set(shown.values())) == len(names) and all(shown.values()) else {name: name for name in names}


def code(value: Any) -> str:
    """`value` as a Markdown code span showing it literally (fenced with more backticks than it holds)."""
    text = " ".join(str(value).splitlines()) if value is not None else ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
