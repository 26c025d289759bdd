"""Each page's settings, kept for the session: coming back to a page (its link, or the browser's Back
and Forward) shows it as the reader left it, and "Reset" puts it back to its first view.

Streamlit forgets a widget's value once a run does not draw it, and a page switch drops the URL
parameters the new page does not bind, so Back lands on a bare ``/two-phases``. Before every run the
entrypoint copies the values of every page's widgets (keys ``<prefix>_<knob>``, ``ui.nav``) into a
per-page memory (``remember_pages``); a page's header puts them back into the URL for any knob the URL
does not name (``restore``), and the bound widgets read them from there, as they would from a shared
link. A link's own parameters always win.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.state.session_state_proxy import get_session_state

from ui.nav import SECTIONS

_MEMORY_KEY = "_page_memory"
_SETTABLE = (bool, int, float, str)
#: Widget keys that are not settings (download buttons, the reset button).
_NOT_SETTINGS = ("_csv_", "_reset")
#: The global setup in the sidebar (ui.setup): kept by the sidebar itself, reset by its own button.
SETUP_KEYS = ("gpu", "custom_tflops", "custom_tbps", "custom_gb", "model", "weights", "kv", "gpus", "experts",
              "skew", "compute_eff", "memory_eff", "overhead_us", "seq_host_us", "graph_us", "launch_us",
              "cfg", "custom_cfg_text", "price")


def _is_setting(key: str, prefix: str) -> bool:
    return key.startswith(f"{prefix}_") and not any(s in key for s in _NOT_SETTINGS)


def _memory() -> dict[str, dict]:
    return st.session_state.setdefault(_MEMORY_KEY, {})


def remember_pages() -> None:
    """Copy the current value of every page's settings into the memory (call before the page runs:
    the widgets of the page just left are still in the session state then)."""
    memory = _memory()
    prefixes = {f"{s.prefix}_": s.prefix for s in SECTIONS if s.prefix}
    for key in list(st.session_state):  # one pass over the state (this runs on every rerun)
        if not isinstance(key, str) or "_" not in key:
            continue
        prefix = prefixes.get(key[:key.index("_") + 1])
        if prefix is None or not _is_setting(key, prefix):
            continue
        value = st.session_state[key]
        if isinstance(value, _SETTABLE):
            memory.setdefault(prefix, {})[key] = value
    for prefix in prefixes.values():
        memory.setdefault(prefix, {})


def _url_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)


def _default_of(key: str) -> tuple[bool, object]:
    """(known, value): the default of the widget drawn under ``key`` in an earlier run, read from
    Streamlit's widget registry (a bound widget's default is what its deserializer makes of "no value",
    as Streamlit's own URL binding computes it). Unknown where the registry does not have it (a widget
    never drawn this session, or a Streamlit whose internals moved): then callers fall back."""
    try:
        state = get_session_state()._state  # SafeSessionState -> SessionState
        widget_id = state.get_widget_id_from_key(key)
        metadata = state.get_widget_metadata(widget_id) if widget_id else None
        if metadata is None:
            return False, None
        return True, metadata.deserializer(None)
    except (AttributeError, KeyError, TypeError, ValueError):
        return False, None


def restore(prefix: str) -> None:
    """Put the page's remembered settings back (call before its widgets): each remembered knob the URL
    does not name seeds its bound widget as a URL parameter would.

    On Back and Forward Streamlit lets the URL decide a bound widget's value (a missing parameter means
    its default), and a page switch has stripped the page's parameters from that history entry; coming
    back through a link, the session may have dropped the widget's state. The values go into the
    parameters Streamlit seeds widgets from, not into the address bar: writing the address bar here
    could push a history entry and cut off Forward. The widget then writes its value into the URL
    itself, as it does for any value not at its default.
    """
    seeds = {}
    for key, value in _memory().get(prefix, {}).items():
        if key in st.query_params:
            continue
        known, default = _default_of(key)
        if known and value == default:
            continue
        seeds[key] = _url_value(value)
    if seeds and not _seed_from(seeds):
        for key, value in seeds.items():  # no access to the seeding parameters: the address bar
            with contextlib.suppress(StreamlitAPIException):
                st.query_params[key] = value


def _seed_from(params: dict[str, str]) -> bool:
    """Add ``params`` to the URL parameters this run's bound widgets seed from (Streamlit's own
    refresh after a page switch, ``set_initial_query_params_from_current``, rewrites the same map).
    False where Streamlit's internals are not as expected."""
    try:
        initial = get_session_state()._state.query_params._initial_query_params
    except AttributeError:
        return False
    if not isinstance(initial, dict):
        return False
    for key, value in params.items():
        initial[key] = [value]
    return True


def reset(prefix: str, after: Callable[[], None] | None = None) -> None:
    """The page's knobs back to their defaults, and its memory forgotten (a button callback). Setting a
    bound widget to its default also takes its parameter out of the URL. A knob's default is the one
    its widget was last drawn with; ``after`` runs once they are set, for a page whose defaults follow
    another knob (page 03's α and k follow the drafting method, whose own default comes back here)."""
    _memory().pop(prefix, None)
    for key in list(st.session_state):
        if isinstance(key, str) and _is_setting(key, prefix):
            known, default = _default_of(key)
            if known:
                st.session_state[key] = default
            else:
                del st.session_state[key]
    for key in list(st.query_params):  # parameters of widgets not drawn right now
        if _is_setting(key, prefix):
            with contextlib.suppress(StreamlitAPIException):  # bound to a drawn widget: it follows it
                del st.query_params[key]
    if after is not None:
        after()


def reset_setup() -> None:
    """The sidebar's setup back to its defaults (a button callback), as ``reset`` does a page's: a
    drawn widget is set to its default, which also takes its parameter out of the URL (Streamlit
    refuses to delete the parameter of a bound widget directly); anything else is dropped."""
    for key in SETUP_KEYS:
        known, default = _default_of(key)
        if known:
            st.session_state[key] = default
        else:
            st.session_state.pop(key, None)
        if key in st.query_params:
            with contextlib.suppress(StreamlitAPIException):  # bound to a drawn widget: it follows it
                del st.query_params[key]


def reset_button(prefix: str, after: Callable[[], None] | None = None) -> None:
    """A small "Reset" button that puts this page's knobs back to their first view (``reset``)."""
    st.button("Reset page", key=f"{prefix}_reset", on_click=reset, args=(prefix, after), type="tertiary",
              icon=":material/restart_alt:", help="Put this page's controls back to their first view "
                                                  "(the setup in the sidebar stays).")


_APP_RERUN_KEY = "_rerun_app"


def drop_over_cap(key: str, flag_key: str, cap: int, size: Callable[[str], int] = len) -> Callable[[], None]:
    """An ``on_change`` for the text area keyed ``key``: a text whose ``size`` is over ``cap`` is not
    kept (it would travel to the browser and back on every rerun); the box is emptied and the size
    kept under ``flag_key`` (0 when within the cap), for the page to say why. (A ``max_chars`` would
    have Streamlit drop such a paste whole, without a word.)"""
    def callback() -> None:
        n = size(st.session_state.get(key) or "")
        st.session_state[flag_key] = n if n > cap else 0
        if n > cap:
            st.session_state[key] = ""
    return callback


def request_app_rerun() -> None:
    """Ask for a rerun of the whole app after this page's run (a callback of a widget on a page that
    changes the sidebar's setup: a page runs as a fragment, so its widgets rerun the page alone)."""
    st.session_state[_APP_RERUN_KEY] = True


def app_rerun_requested() -> bool:
    """True once after ``request_app_rerun``."""
    return bool(st.session_state.pop(_APP_RERUN_KEY, False))
