"""Tell the reader when a shared link carried settings that could not be used.

Streamlit drops a bound widget's URL value that is malformed or out of range and shows the default
instead. That keeps the page safe but silent; a reader who followed a hand-edited or stale link
deserves to know. On a session's first run we note the raw query parameters before any widget reads
them, and after the page has run we list those that did not survive.

The values come from whoever wrote the link, so they are never rendered as markup: the notice's text
is fixed, and the ignored settings are shown as plain text in a code block (``st.code`` renders no
markdown or HTML), shortened and counted so that a huge link cannot flood the page.

Numbers are read as written in ASCII only. Python's ``float`` accepts any script's digits ("٣" is 3.0)
and Unicode spaces, so Streamlit would take such a value silently; no valid value of this app has such
characters, so they are dropped before any widget reads them and named in the notice.
"""

from __future__ import annotations

import math

import streamlit as st

_CHECKED = "_url_checked"
_RAW = "_url_raw"  # the first run's parameters, until the notice is worked out
_NOTICE = "_url_notice"  # (ignored settings, the view they were found on)
MAX_VALUE_CHARS = 60  # a longer key or value is shortened in the notice
MAX_REASON_CHARS = 240  # a widget's own reason for refusing a value, at most
MAX_LISTED = 10  # settings listed in the notice; the rest are counted
FIRST_SHOWN = 3  # of those, shown before the notice's "more" expander
#: {widget key: section label} of the settings inside closed lazy sections (``ui.layout.lazy_section``
#: fills it as the page runs; emptied on a session's first run, before the page).
CLOSED_SECTIONS_KEY = "_closed_section_settings"
#: True while the page's latest run ended early at a notice (``ui.layout.stop_page`` sets it; the
#: entrypoint clears it before each run of the page).
STOPPED_KEY = "_page_stopped"
#: Why a widget refused a link's value, by the widget's key, where its own check says more than "not
#: valid" (the custom model's link: the config error).
REASONS_KEY = "_url_reasons"


def _non_ascii_number(value: str) -> bool:
    """A number written with characters outside ASCII ("٣", "３", "1\u2003"), which ``float`` reads."""
    if value.isascii():
        return False
    try:
        float(value)
    except ValueError:
        return False
    return True


def raw_params_on_first_run() -> dict[str, list[str]] | None:
    """The URL's query parameters as the session's first run received them (None on later runs, or
    the same again while the notice has not been worked out: a rerun that cut the first run short).

    Parameters holding a number in non-ASCII digits are removed from the URL before any widget reads
    them (the widget shows its default; the notice names them)."""
    if st.session_state.get(_CHECKED):
        raw = st.session_state.get(_RAW)
        if raw is not None:  # the first run again (it was cut short): its page fills this anew
            st.session_state[CLOSED_SECTIONS_KEY] = {}
        return raw
    st.session_state[_CHECKED] = True
    st.session_state[CLOSED_SECTIONS_KEY] = {}
    raw = {key: st.query_params.get_all(key) for key in st.query_params}
    for key, values in raw.items():
        if any(_non_ascii_number(v) for v in values):
            del st.query_params[key]
    st.session_state[_RAW] = raw  # until show_rejected has used it
    return raw


def _url_text(key: str, value) -> str | None:
    """``value`` as the widget keyed ``key`` writes it in a link, through the widget's own serializer
    (a radio or select box with a ``format_func`` writes its label: "Prefill-first" for "prefill-first");
    None where Streamlit's session state does not say (its internals are read defensively)."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        state = get_session_state()._state
        widget_id = state._key_id_mapper.get_id_from_key(key)
        meta = state._new_widget_state.widget_metadata.get(widget_id) if widget_id else None
        text = meta.serializer(value) if meta is not None else None
    except Exception:  # a missing internal only loses this refinement
        return None
    return text if isinstance(text, str) else None


def _same(raw: str, value) -> bool:
    if isinstance(value, bool):  # a toggle's or an expander's "false" / "true"
        return raw.strip().lower() == str(value).lower()
    if str(value) == raw:
        return True
    if not raw.isascii():
        return False
    try:
        return math.isclose(float(raw), float(value))
    except (TypeError, ValueError):
        return False


def _short(text: str) -> str:
    """``text`` on one line, shortened to MAX_VALUE_CHARS (control characters shown as escapes)."""
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def rejected_params(raw: dict[str, list[str]]) -> list[str]:
    """``key=value`` strings from ``raw`` that the app ignored: unknown keys, and values a widget
    refused (a value equal to the widget's default is dropped from the URL too, and is not listed)."""
    rejected = []
    for key, values in raw.items():
        shown = f"{_short(key)}={', '.join(_short(v) for v in values)}"
        if key not in st.session_state:
            section = st.session_state.get(CLOSED_SECTIONS_KEY, {}).get(key)
            rejected.append(f"{shown} (in the closed section '{section}': open it to use this setting)"
                            if section else
                            f"{shown} (not used: the page stopped at its notice before its settings; "
                            "one of them applies once the setup fits)" if st.session_state.get(STOPPED_KEY)
                            else f"{shown} (not a setting of this page)")
        elif len(values) > 1:  # a link that names one setting twice: the widget takes one of them
            rejected.append(f"{shown} (given {len(values)} times; using {_using(st.session_state[key])})")
        elif key in st.query_params:
            continue  # the widget took it
        elif not (_same(values[0], st.session_state[key])
                  or values[0] == _url_text(key, st.session_state[key])):
            reason = st.session_state.get(REASONS_KEY, {}).get(key)
            why = f": {reason[:MAX_REASON_CHARS]}" if reason else ""
            rejected.append(f"{shown} (not a valid value{why}; using {_using(st.session_state[key])})")
    return rejected


def _using(value) -> str:
    """The value a setting fell back to, as the notice names it: 'the default' for an empty one (the
    custom model's link), floats to 4 significant figures (a custom GPU's memory read 79.6474609375)."""
    if value is None or value == "":
        return "the default"
    if isinstance(value, float):
        return f"{value:.4g}"
    return _short(str(value))


def notice_lines(rejected: list[str]) -> str:
    """The ignored settings, one a line, at most MAX_LISTED of them (plain text, for ``st.code``)."""
    lines = rejected[:MAX_LISTED]
    if len(rejected) > MAX_LISTED:
        lines.append(f"… and {len(rejected) - MAX_LISTED} more")
    return "\n".join(lines)


def _view(page: str) -> tuple:
    """The page and its widgets' values now: what a reader changing anything would change (the
    session's own entries, named with a leading underscore, are not widgets and are left out)."""
    simple = str | int | float | bool | type(None)
    view = []
    for key, value in st.session_state.to_dict().items():
        if key.startswith("_"):
            continue
        if isinstance(value, list | tuple) and all(isinstance(v, simple) for v in value):
            value = tuple(value)  # a multiselect's choices
        elif not isinstance(value, simple):
            continue
        view.append((key, repr(value) if not isinstance(value, str) or len(value) <= 200
                     else (len(value), hash(value))))  # a long pasted text: its length and hash
    return page, tuple(sorted(view))


def show_rejected(raw: dict[str, list[str]] | None, container, page: str = "") -> None:
    """Write a warning into ``container`` (placed at the top of the page) if anything was ignored.

    On the session's first run the ignored settings are worked out and kept with the view they gave
    (the ``page`` and its widgets' values). A later full run shows the notice again as long as the
    view is still that one, so a rerun the reader did not ask for (the watchdog's after a reconnect)
    keeps it; a change of any setting, or another page, ends it.

    The warning's text is fixed; the settings themselves go in a code block below it, as plain text."""
    if raw is not None:
        rejected = rejected_params(raw)
        st.session_state.pop(_RAW, None)
        if rejected:
            st.session_state[_NOTICE] = (rejected, _view(page))
    saved = st.session_state.get(_NOTICE)
    if not saved:
        return
    rejected, view = saved
    if view != _view(page):
        del st.session_state[_NOTICE]
        return
    if rejected:
        with container.container(key="url_notice"):
            st.warning("This link had settings that could not be used as given:",
                       icon=":material/link_off:")
            lines = notice_lines(rejected).split("\n")
            # The first few in view, the rest folded: a link with ten bad settings filled a phone's
            # whole first screen above the page.
            st.code("\n".join(lines[:FIRST_SHOWN]), language=None, wrap_lines=True)
            if len(lines) > FIRST_SHOWN:
                with st.expander(f"{len(rejected) - FIRST_SHOWN} more", key="url_notice_more"):
                    st.code("\n".join(lines[FIRST_SHOWN:]), language=None, wrap_lines=True)
