"""A rerun of a page the server no longer knows becomes a full rerun instead of being dropped.

Each page runs as a fragment (``app.py``), so a widget on it asks the server to rerun that fragment
alone, naming it by id. A server that has not run the page in this session (it was restarted, or the
reader's connection reached another replica) has no such fragment, and Streamlit 1.67 then drops the
request with only a log line ("The fragment with id ... does not exist anymore"): the reader's change
is lost and the page stays as it was. Streamlit drops it to avoid a race with dialogs a full run has
just closed; this app has none, and every full run draws the page's fragment again, so an unknown
fragment only means the session is new: rerunning the whole app with the same widget values is right.

The check runs in ``AppSession.request_rerun`` (the server's event loop, before any script runs),
so it is installed once per process, at the first run (app.py imports it). A process that has run no
script yet has not installed it: the page's watchdog (``ui/watchdog.py``) asks for a full rerun right
after a reconnect, which runs the app (installing this) and draws the page again.
"""

from __future__ import annotations

from streamlit.runtime.app_session import AppSession

_ORIGINAL = AppSession.request_rerun


def _request_rerun(self: AppSession, client_state) -> None:
    if client_state is not None and client_state.fragment_id and not self.has_fragment(
            client_state.fragment_id):
        client_state.ClearField("fragment_id")  # the whole app, with the same widget values
    _ORIGINAL(self, client_state)


def install() -> None:
    """Patch the server once per process (idempotent)."""
    if AppSession.request_rerun is not _request_rerun:
        AppSession.request_rerun = _request_rerun
