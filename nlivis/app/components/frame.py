"""The frame every page shares: running a page inside the state module's URL handling, its title and the
problems the URL had, the loaded models (or a pointer to Home), the protocol notes every number carries, and
the sidebar's figure-format choice."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from nlivis.app import background, cache, paths, state
from nlivis.app.cache import models as cached_models, run_memo, suites
from nlivis.app.text import md
from nlivis.data.split_choice import protocol_named

EXPLORER = paths.EXPLORER.path
"""The page a clicked pair opens in."""

NOTE_ICON = ":material/info:"
"""Starts every note caption (Streamlit's bundled icon font: no glyph depends on the browser's fonts)."""

SMALL_PROTOCOL_NOTE = ("Numbers come from models trained on reduced protocols, not the papers' training data: snli-small "
                       "trains on SNLI **test** (9,824 pairs) and is scored on SNLI dev; mnli-small trains on XNLI-en "
                       "test + SNLI test (about 15k pairs); quora-small on Quora test (10k). They are not the papers' results.")
"""Shown wherever a number is, unless a checkpoint's own protocol note is more specific."""


@contextmanager
def page(which: paths.Page, caption: str | None = None, *, title: str | None = None) -> Iterator[None]:
    """Run the body as page `which` (its key names its view parameters) inside the state module's URL handling
    (`state.page_run`: follow a changed URL first, write the view into the URL once after), under its title
    (`title`, or its sidebar title) and icon, the problems the URL had and the sidebar's figure-format choice; the
    files a run looks at twice (the checkpoint folders) are read once in it (`cache.run_memo`)."""
    run_through_the_router()
    links = st.sidebar.container()  # the first thing in the sidebar, filled once the page has run
    try:
        with run_memo.one_run(), background.page_running(), \
                state.page_run(which.key, cache.STATE_CHECKS, after=lambda: sidebar_links(links)):
            header(title or which.title, caption, which.icon)
            state.switch_if_asked(lambda: sidebar_links(links))  # a line clicked in a list: leave before the page runs
            background.warm_up(cache.default_model_folders, cache.load_model, suites.keep_probe_suite)
            yield
    except Exception:
        sidebar_links(links)  # a page that failed still leads to the others
        raise


def sidebar_links(where: Any) -> None:
    """The sidebar's link to every page (the router's own list is hidden): each carries its page's URL
    (`state.link_to`), so a visit is one step of the browser's history, not two."""
    for page in paths.PAGES:
        params = state.link_to(page.key, shows_pair=page in paths.PAIR_PAGES)
        where.page_link(page.path, label=page.title, icon=page.icon, query_params=params or None, width="stretch")


def navigation() -> st.Page:
    """The router (app.py runs the page it returns): every page of `paths.PAGES`, Home the default, each named by
    its title with a bundled icon (no icon depends on the browser's emoji font); url paths follow the file names
    (/Pair_explorer). Its own sidebar list is hidden: `sidebar_links` draws one whose links carry the pages' views."""
    return st.navigation([st.Page(page.path, title=page.title, icon=page.icon, default=page is paths.HOME)
                          for page in paths.PAGES], position="hidden")


def run_through_the_router() -> None:
    """Make this run, and every later one, the router's, when Streamlit ran this page as an old-style page.

    Streamlit decides once per server, when the first browser session opens, whether the app is an old-style
    multipage app: with a `pages/` folder beside the main script it runs the links opened after a launch straight
    from pages/ (a sidebar entry "app", no icons, app.py never run) until some run calls `st.navigation`
    (`PagesManager.uses_pages_directory`, read by the script runner before every run). A page run that way calls
    the router's `st.navigation` (which turns the old-style mode off for every later run) and starts again, now
    through app.py, on the same page (a page's hash follows its URL path in both modes) with the same query
    string. Going on instead would leave the browser's session unable to take a click on a chart (seen in
    Chromium). Only a session's first run is run that way, so no widget event is lost."""
    if PagesManager.uses_pages_directory:
        navigation()
        st.rerun()


def header(title: str, caption: str | None = None, icon: str = ":material/search:") -> None:
    """The page's title and what the URL named but could not show."""
    st.set_page_config(page_title=f"nlivis · {title}", page_icon=icon, layout="wide")
    st.title(title)
    if caption:
        st.caption(caption)
    for problem in state.url_problems():
        st.warning(md(problem))


def require_models(view: str, *, weights: bool = True, declared: bool = False) -> list[cache.Model]:
    """The loaded models — with `weights=False` only described by their config.json (`cache.models.chosen`: no
    weights read, torch not imported, for a view of recorded predictions, a projection or a pair's readings kept
    on disk; with `declared`, also their declared trace types) — or stop the page with a message saying how to load
    one."""
    models, errors = cached_models.chosen(weights, declared)
    for error in errors:
        st.error(f"Could not load {md(error)}")
    if not models:
        st.info(f"No model is loaded. Choose checkpoints on the Home page to use the {view}.")
        st.page_link(paths.HOME.path, label="Go to Home", icon=paths.HOME.icon)
        state.stop()
    return models


def protocol_note_for(name: str | None) -> str:
    """The note of the protocol called `name` (a checkpoint's recorded protocol), or the general note."""
    protocol = protocol_named(name)
    if protocol is not None and protocol.note:
        return f"Protocol {md(protocol.name)}: {md(protocol.note)}"
    return SMALL_PROTOCOL_NOTE


def protocol_notes(models: Sequence[cache.Model] | Sequence[str | None]) -> None:
    """One caption per distinct protocol among the models shown (or the general note)."""
    names = [m.protocol if isinstance(m, cache.Model) else m for m in models]
    for note in dict.fromkeys(protocol_note_for(name) for name in names) or [SMALL_PROTOCOL_NOTE]:
        st.caption(f"{NOTE_ICON} {note}")


def caption_note(text: str) -> None:
    """A note caption (text already Markdown-safe)."""
    st.caption(f"{NOTE_ICON} {text}")
