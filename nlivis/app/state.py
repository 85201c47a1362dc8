"""The app's state: what every page shows, kept in the session and in the URL, read and written only here.

Two kinds of state, both in `st.session_state` (across page changes) and in the URL (across a reload, a
pasted link and the browser's Back):

* the selection all pages share —
    models        checkpoint folder names, comma-separated (`esan-snli-small,gcnn-snli-small`)
    split, pair   the current pair as a 0-based row of a local split (`split=snli_dev&pair=3934`), or
    premise,
    hypothesis    typed text (`gold` too when the typed pair came from a labelled file)
    from, from.*  the list the pair was opened from (`from=predictions&from.model=esan-snli-small&…`), so
                  the Pair explorer can say why the pair is there and step to the list's next pair;
* each page's own view state (its model, split, colouring, selected cell / tag / category, tab …):
  named parameters that components read with `value` and write with `remember` (widgets through
  `nlivis.app.components.controls`, which does both).

The URL of a page holds `models`, the pair (only on pages that show one, i.e. that called `pair()` in this
run) and the page's parameters whose value differs from their default. Rules, applied by `begin` before a
page runs and `finish` after it:
  * a URL with parameters that differ from what the app last wrote (a link, a reload, Back, a click-through)
    *is* the view: the selection it names is taken over, and the page's parameters are exactly those in it
    (absent ones go back to their default);
  * a URL without parameters, or the one the sidebar's link to the page offered (`link_to`: the page's last
    view), restores the page's last view from the session;
  * after the page ran (completed or stopped, not when a rerun interrupted it) the URL is written once, so one
    user action is one step of the browser's history. Navigation goes through links that carry the new page's
    URL (the sidebar's, "This pair in …", the one `switch_to` shows and clicks), never a switch made by the
    server, which Streamlit writes as two steps.

This module imports nothing else of `nlivis.app`: checks that need the checkpoint folders or the data (does
a model exist, is a row in its split) are passed in by the caller.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NoReturn, Sequence

import streamlit as st

from nlivis.data.text import decimal_number, shown as shown_text, whole_number

MODELS, SPLIT, PAIR, PREMISE, HYPOTHESIS, GOLD, FROM = "models", "split", "pair", "premise", "hypothesis", "gold", "from"
PAIR_PARAMETERS = (SPLIT, PAIR, PREMISE, HYPOTHESIS, GOLD)
FROM_PREFIX = "from."
"""`from.<field>` parameters carry the fields of the list a pair was opened from."""

MAX_SENTENCE_CHARS = 2000
"""Longer typed sentences are cut (with a note) before analysis; a URL carries them as the models read them."""

_MODELS = "nlivis.models"
_PAIR = "nlivis.pair"
_PAIR_VERSION = "nlivis.pair_version"
_PAIR_USED = "nlivis.pair_used"
_LIST = "nlivis.list"
_VIEW = "nlivis.view"
_FORCED = "nlivis.forced"
_SHOWN = "nlivis.shown"
_WRITTEN = "nlivis.url_written"
_PROBLEMS = "nlivis.url_problems"
_MODELS_SET = "nlivis.models_set"
_EVENTS = "nlivis.events"
_PAGE = "nlivis.page"
_LAST_SHOWN = "nlivis.last_shown"
_OFFERED = "nlivis.offered"
_AFTER = "nlivis.after_finish"
_ARRIVED = "nlivis.arrived"


# ---------------------------------------------------------------- values

@dataclass(frozen=True)
class PairRef:
    """The pair pages analyse: row `row` (0-based) of local split `split`, or typed `premise` / `hypothesis`
    (with `gold` when it came from a labelled file, e.g. a challenge set)."""

    split: str | None = None
    row: int | None = None
    premise: str = ""
    hypothesis: str = ""
    gold: str | None = None

    @property
    def is_row(self) -> bool:
        return self.split is not None and self.row is not None

    def parameters(self) -> dict[str, str]:
        if self.is_row:
            return {SPLIT: str(self.split), PAIR: str(int(self.row))}
        params = {PREMISE: clean_sentence(self.premise)[0], HYPOTHESIS: clean_sentence(self.hypothesis)[0]}
        if self.gold:
            params[GOLD] = self.gold
        return params


DEFAULT_PAIR = PairRef(premise="A man is playing a guitar on a stage .", hypothesis="A person is making music .")
"""The pair a page starts with before the user types or picks one."""


@dataclass(frozen=True)
class ListRef:
    """The list a pair was opened from: a kind that a component knows how to rebuild (e.g. "predictions")
    and its fields (model, split, filters, order …), all strings, so it fits in the URL."""

    kind: str
    fields: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, kind: str, **fields: Any) -> "ListRef":
        return cls(kind, tuple(sorted((k, str(v)) for k, v in fields.items() if v is not None and v != "")))

    def get(self, name: str, default: str | None = None) -> str | None:
        return dict(self.fields).get(name, default)

    def with_fields(self, **fields: Any) -> "ListRef":
        merged = {**dict(self.fields), **{k: v for k, v in fields.items()}}
        return ListRef.of(self.kind, **merged)

    def parameters(self) -> dict[str, str]:
        return {FROM: self.kind, **{FROM_PREFIX + name: value for name, value in self.fields}}


def clean_sentence(text: str) -> tuple[str, str | None]:
    """Whitespace collapsed and cut to MAX_SENTENCE_CHARS; returns (text, a note when it was cut)."""
    text = " ".join((text or "").split())
    if len(text) > MAX_SENTENCE_CHARS:
        return text[:MAX_SENTENCE_CHARS], f"the sentence was cut to its first {MAX_SENTENCE_CHARS} characters"
    return text, None


# ---------------------------------------------------------------- (de)serialising parameter values

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off"}


def serialise(value: Any) -> str:
    """A value as the URL writes it: bools as 1/0, sequences comma-separated."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(serialise(v) for v in value)
    return str(value)


def parse(text: str, like: Any) -> Any:
    """`text` read as the type of `like` (bool, int, float, list of those, or str); ValueError when it is not."""
    if isinstance(like, bool):
        word = text.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise ValueError(f"{text!r} is not yes/no (1 or 0)")
    if isinstance(like, int):
        return whole_number(text)
    if isinstance(like, float):
        return decimal_number(text)
    if isinstance(like, (list, tuple)):
        element = like[0] if like else ""
        return [parse(part, element) for part in text.split(",") if part.strip()] if text.strip() else []
    return text


# ---------------------------------------------------------------- the shared selection

def model_names() -> list[str]:
    """Checkpoint folder names chosen to load (kept across pages)."""
    return list(st.session_state.get(_MODELS, []))


def models_chosen() -> bool:
    """Whether a selection of models was ever made in this session (by Home or a link), even an empty one."""
    return bool(st.session_state.get(_MODELS_SET))


def set_model_names(names: Sequence[str]) -> None:
    st.session_state[_MODELS] = list(dict.fromkeys(str(n) for n in names))
    st.session_state[_MODELS_SET] = True


def pair() -> PairRef:
    """The current pair (and, from this call on, part of this page's URL)."""
    st.session_state[_PAIR_USED] = True
    return pair_seen()


def pair_seen() -> PairRef:
    """The current pair, read without making it part of this page's URL (`pair` does): a list of pairs marks the
    line the pair was opened from, and its page's URL stays the list's."""
    return st.session_state.get(_PAIR, DEFAULT_PAIR)


def pair_version() -> int:
    """Grows each time the pair changes; a pair form re-reads the pair when it saw an older version."""
    return int(st.session_state.get(_PAIR_VERSION, 0))


def set_pair(new: PairRef, came_from: ListRef | None = None) -> None:
    """Make `new` the pair every page analyses next; `came_from` is the list it was picked from (None: typed
    or picked by row, so no list)."""
    if new != st.session_state.get(_PAIR, DEFAULT_PAIR) or came_from != st.session_state.get(_LIST):
        st.session_state[_PAIR] = new
        st.session_state[_LIST] = came_from
        st.session_state[_PAIR_VERSION] = pair_version() + 1


def step_to(new: PairRef, came_from: ListRef | None) -> None:
    """Make `new` (from list `came_from`) the pair and write the URL now: called from the callback of the click
    that chose it (Previous / Next), before the run that shows it, so the address changes when the view starts
    to, in one step of the browser's history — a Back while the new pair is computed returns to the one before,
    rather than leaving the page, and the click costs one run, not a run and a rerun."""
    set_pair(new, came_from)
    written = st.session_state.get(_WRITTEN) or _url_now()
    params = {name: text for name, text in written.items()
              if name not in PAIR_PARAMETERS and name != FROM and not name.startswith(FROM_PREFIX)}
    params.update(pair_link(new, came_from))
    if params != _url_now():
        st.query_params.from_dict(params)
    st.session_state[_WRITTEN] = params


def pair_list() -> ListRef | None:
    """The list the current pair was opened from, if any."""
    return st.session_state.get(_LIST)


# ---------------------------------------------------------------- each page's own view state

def _view(page: str) -> dict[str, str]:
    views = st.session_state.setdefault(_VIEW, {})
    return views.setdefault(page, {})


def widget_key(page: str, name: str) -> str:
    """The session key of the widget that shows view parameter `name` of `page` (unique across pages)."""
    return f"{page}_{name}"


def wanted(page: str, name: str) -> str | None:
    """The serialised value the page should show for `name` (from the URL or the last visit), or None."""
    return _view(page).get(name)


def forced(page: str, name: str) -> bool:
    """True once after a URL was followed: the widget for `name` must take the URL's value (or its default
    when the URL has none), whatever it holds from before."""
    pending = st.session_state.get(_FORCED, {}).get(page)
    if pending is None or name in pending:
        return False
    pending.add(name)
    return True


def value(page: str, name: str, default: Any) -> tuple[Any, str | None]:
    """(the view's value for `name` parsed like `default`, a problem when the stored text was not such a
    value — it then gives way to `default`)."""
    text = wanted(page, name)
    if text is None:
        return default, None
    try:
        return parse(text, default), None
    except ValueError as error:
        return default, f"{name}={text!r} in the link is not understood ({error}); showing the default"


def remember(page: str, name: str, current: Any, default: Any) -> None:
    """Record what the page shows for `name` now: kept for the next visit, and in the URL unless it is the default."""
    text = serialise(current)
    _view(page)[name] = text
    shown = st.session_state.setdefault(_SHOWN, {})
    shown[name] = None if text == serialise(default) else text


def forget(page: str, name: str) -> None:
    """`name` is back to its default and leaves the URL."""
    _view(page).pop(name, None)
    st.session_state.setdefault(_SHOWN, {})[name] = None


# ---------------------------------------------------------------- following and writing the URL

def _url_now() -> dict[str, str]:
    return {name: st.query_params[name] for name in st.query_params}


def url_problems() -> list[str]:
    """What the URL followed before this run named but could not be shown (plain text, to be escaped)."""
    return list(st.session_state.get(_PROBLEMS, []))


@dataclass
class Checks:
    """What `begin` cannot know itself: which checkpoint names exist, and whether a pair exists."""

    known_models: Callable[[list[str]], tuple[list[str], list[str]]] = lambda names: (names, [])
    """names → (those found, those not found)."""
    pair_problem: Callable[[PairRef], str | None] = lambda pair: None
    """Why a row pair cannot be shown (no such split, no such row), or None."""


def begin(page: str, checks: Checks | None = None) -> None:
    """Call before page `page` runs: follow the URL when it changed (see the module docstring)."""
    checks = checks or Checks()
    arrived_from = st.session_state.get(_PAGE)
    st.session_state[_PAGE] = page
    st.session_state[_SHOWN] = {}
    st.session_state[_PAIR_USED] = False
    st.session_state[_PROBLEMS] = []
    given = _url_now()
    st.session_state[_ARRIVED] = arrived_from != page or given != st.session_state.get(_WRITTEN)
    if not given or given == st.session_state.get(_WRITTEN) or given == st.session_state.get(_OFFERED, {}).get(page):
        return
    st.session_state[_WRITTEN] = given  # consumed: an interrupted run must not follow it twice
    problems: list[str] = []
    if MODELS in given:
        names = [n.strip() for n in given[MODELS].split(",") if n.strip()]
        found, unknown = checks.known_models(names)
        if unknown:
            problems.append(f"The link names checkpoint(s) {', '.join(unknown)} that are not in the checkpoint "
                            "folders; " + ("the others are loaded." if found else "no model from the link is loaded."))
        if found or not unknown:
            set_model_names(found)
    followed = _pair_from(given, checks, problems)
    if followed is not None:
        set_pair(followed, _list_from(given))
    st.session_state.setdefault(_VIEW, {})[page] = {
        name: text for name, text in given.items()
        if name not in (MODELS, PAIR, PREMISE, HYPOTHESIS, GOLD, FROM) and not name.startswith(FROM_PREFIX)}
    st.session_state.setdefault(_FORCED, {})[page] = set()
    st.session_state[_PROBLEMS] = problems


def arrived() -> bool:
    """Whether this run came to the page (another page before, or a URL the app did not write: a link, a reload,
    Back), rather than rerunning it for a widget."""
    return bool(st.session_state.get(_ARRIVED))


def _pair_from(given: dict[str, str], checks: Checks, problems: list[str]) -> PairRef | None:
    if PAIR in given:
        row, split = url_row(given[PAIR]), given.get(SPLIT, "").strip()
        if row is None:
            problems.append(f"pair={shown_text(given[PAIR], 40)} in the link is not a row number (0-based, digits 0-9); "
                            "the pair is unchanged")
            return None
        if not split:
            problems.append(f"the link gives pair={row} but no split; the pair is unchanged")
            return None
        candidate = PairRef(split=split, row=row)
        problem = checks.pair_problem(candidate)
        if problem:
            problems.append(f"The link's pair cannot be shown: {problem}; the pair is unchanged")
            return None
        return candidate
    if PREMISE in given or HYPOTHESIS in given:
        return PairRef(premise=given.get(PREMISE, ""), hypothesis=given.get(HYPOTHESIS, ""),
                       gold=given.get(GOLD) or None)
    return None


def url_row(text: str | None) -> int | None:
    """A row number (0 or more) from a URL parameter, read by the one number parser; None when it is absent or
    is not one (digits of other scripts, "²", a minus sign or a fraction)."""
    if text is None:
        return None
    try:
        row = whole_number(text)
    except ValueError:
        return None
    return row if row >= 0 else None


def _list_from(given: dict[str, str]) -> ListRef | None:
    kind = given.get(FROM)
    if not kind:
        return None
    return ListRef.of(kind, **{name[len(FROM_PREFIX):]: text for name, text in given.items()
                               if name.startswith(FROM_PREFIX)})


def url_parameters() -> dict[str, str]:
    """What this run's page shows, as URL parameters: models, the pair (if the page used it), its parameters."""
    params: dict[str, str] = {}
    if model_names():
        params[MODELS] = ",".join(model_names())
    if st.session_state.get(_PAIR_USED):
        params.update(st.session_state.get(_PAIR, DEFAULT_PAIR).parameters())
        listed = pair_list()
        if listed is not None:
            params.update(listed.parameters())
    shown = {name: text for name, text in st.session_state.get(_SHOWN, {}).items() if text is not None}
    clash = set(shown) & (set(params) | {MODELS, *PAIR_PARAMETERS, FROM})
    if clash and st.session_state.get(_PAIR_USED):
        raise AssertionError(f"page parameters {sorted(clash)} clash with the pair's URL parameters")
    params.update({name: text for name, text in shown.items() if name not in params})
    return params


def finish() -> None:
    """Call when the page completed (or stopped): write its view into the URL, once, then run what `page_run`
    was given to run after it (the sidebar's links, which carry every page's view)."""
    params = url_parameters()
    if params != _url_now():
        st.query_params.from_dict(params)
    st.session_state[_WRITTEN] = params
    shown = {name: text for name, text in st.session_state.get(_SHOWN, {}).items() if text is not None}
    st.session_state.setdefault(_LAST_SHOWN, {})[st.session_state.get(_PAGE)] = shown
    after = st.session_state.get(_AFTER)
    if after is not None:
        after()


@contextmanager
def page_run(page: str, checks: Checks | None = None, after: Callable[[], None] | None = None) -> Iterator[None]:
    """`begin` … `finish` around one run of a page; a rerun, a page switch or a stop that interrupts it writes
    nothing here (the next run does; `stop` writes before it stops). `after` runs once the URL is written."""
    begin(page, checks)
    st.session_state[_AFTER] = after
    yield
    finish()


def link_to(page: str, shows_pair: bool) -> dict[str, str]:
    """The URL parameters of a link to `page` that shows its view as this session last showed it (its own
    parameters then) with the selection of now (the models; the pair and its list when `shows_pair`). A link
    that carries them opens the page in one step of the browser's history: the address the link sets is already
    the one the page writes (a link without parameters sets the bare address first, then the page writes its
    parameters: two steps). Remembered as offered: following it restores the page's last view, as the link
    promised, rather than reading the view from the URL (a value that no longer fits, e.g. a model since
    unloaded, then falls back to its default silently, as on a return to the page)."""
    params = {MODELS: ",".join(model_names())} if model_names() else {}
    if shows_pair:
        params.update(st.session_state.get(_PAIR, DEFAULT_PAIR).parameters())
        listed = pair_list()
        if listed is not None:
            params.update(listed.parameters())
    shown = st.session_state.get(_LAST_SHOWN, {}).get(page, {})
    params.update({name: text for name, text in shown.items() if name not in params})
    st.session_state.setdefault(_OFFERED, {})[page] = params
    return params


def stop() -> NoReturn:
    """st.stop, after writing the view into the URL (once stopped, nothing more reaches the browser)."""
    finish()
    st.stop()
    raise AssertionError("st.stop returned")  # pragma: no cover - st.stop raises


OPENING = "nlivis_opening"
"""The key prefix of the link `switch_to` shows (and its script clicks)."""

_WHEN_DRAWN_SCRIPT = """<script>
(() => {{
  const started = Date.now();
  const act = () => {{
    const target = document.querySelector('{selector}');
    if (target) target.{action};
    else if (Date.now() - started < 30000) setTimeout(act, 50);
  }};
  act();
}})();
</script>"""
"""Do `action` to the element `selector` finds once Streamlit has drawn it (trying for up to 30 s)."""


def scroll_into_view(key: str) -> None:
    """Scroll the element with key `key` to the middle of the window once it is drawn (Streamlit keeps no
    scroll position across pages: after Back, the list a pair was opened from is ~2,000 px down)."""
    st.html(_WHEN_DRAWN_SCRIPT.format(selector=f".st-key-{key}", action="scrollIntoView({block: 'center'})"),
            unsafe_allow_javascript=True)


def switch_to(page_path: str, params: dict[str, str], label: str = "Open this pair in the Pair explorer") -> NoReturn:
    """Leave this page for page `page_path` with `params` as its URL, as one step of the browser's history (Back
    returns here), and stop this run (its URL written).

    A switch made by the server (st.switch_page) is two steps of the history: Streamlit writes the new parameters
    on the page being left, then the new page. A link the browser follows is one: the address it sets already
    carries its parameters. So the page shows the link (`label`: the way on, should the browser run no script)
    and a script that clicks it."""
    _opening_link(page_path, params, label)
    stop()


def _opening_link(page_path: str, params: dict[str, str], label: str) -> None:
    """The link `switch_to` shows, and the script that clicks it once drawn."""
    number = st.session_state.get(OPENING, 0) + 1
    st.session_state[OPENING] = number
    key = f"{OPENING}_{number}"
    with st.container(key=key):
        st.page_link(page_path, label=label, icon=":material/open_in_new:", query_params=params)
    st.html(_WHEN_DRAWN_SCRIPT.format(selector=f".st-key-{key} a", action="click()"), unsafe_allow_javascript=True)


_SWITCH = "nlivis.switch"


def switch_at_next_run(page_path: str, params: dict[str, str], label: str = "Open this pair in the Pair explorer") -> None:
    """From a click's callback (a line of a list): the next run leaves this page for `page_path` with `params`
    (as `switch_to` does) as soon as the page's frame has drawn its header (`switch_if_asked`), so the click costs
    a run of the frame, not of the whole page it leaves."""
    st.session_state[_SWITCH] = (page_path, dict(params), label)


def switch_if_asked(before_stop: Callable[[], None]) -> None:
    """Leave the page now if a callback asked to (`switch_at_next_run`): the opening link, `before_stop` (the
    sidebar), and stop, writing no URL — the page's view did not change, so its address stays what it is."""
    asked = st.session_state.pop(_SWITCH, None)
    if asked is None:
        return
    _opening_link(*asked)
    before_stop()
    st.stop()


def pair_link(pair_ref: PairRef, came_from: ListRef | None = None) -> dict[str, str]:
    """URL parameters that open `pair_ref` (from list `came_from`) with the models loaded now."""
    params = {MODELS: ",".join(model_names())} if model_names() else {}
    params.update(pair_ref.parameters())
    if came_from is not None:
        params.update(came_from.parameters())
    return params


def _event_text(event: Any) -> str:
    return json.dumps(event, default=str, sort_keys=True)


def new_event(key: str, event: Any) -> bool:
    """True when `event` (a chart's or table's selection) differs from the last one seen for `key`: the event
    stays in the session on later reruns, so one click must act once, and after Back the URL, not an old
    click, decides what is shown."""
    memory = st.session_state.setdefault(_EVENTS, {})
    text = _event_text(event)
    if memory.get(key) == text:
        return False
    memory[key] = text
    return True
