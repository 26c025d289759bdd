"""ui.fragment_rerun: a rerun of a fragment the session does not know becomes a full rerun."""

from __future__ import annotations

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession

from ui import fragment_rerun


class _Session:
    def __init__(self, known: set[str]) -> None:
        self.known, self.asked = known, []

    def has_fragment(self, fragment_id: str) -> bool:
        return fragment_id in self.known


def _ask(session: _Session, fragment_id: str) -> ClientState:
    state = ClientState(fragment_id=fragment_id, query_string="gpu=H100+SXM")
    original = fragment_rerun._ORIGINAL
    fragment_rerun._ORIGINAL = lambda self, cs: self.asked.append(cs)
    try:
        fragment_rerun._request_rerun(session, state)
    finally:
        fragment_rerun._ORIGINAL = original
    return session.asked[-1]


def test_an_unknown_fragment_reruns_the_whole_app_with_the_same_state():
    sent = _ask(_Session(set()), "abc")
    assert sent.fragment_id == ""
    assert sent.query_string == "gpu=H100+SXM"


def test_a_known_fragment_still_reruns_alone():
    assert _ask(_Session({"abc"}), "abc").fragment_id == "abc"


def test_a_full_rerun_is_left_alone():
    assert _ask(_Session(set()), "").fragment_id == ""


def test_install_patches_the_server_once():
    fragment_rerun.install()
    fragment_rerun.install()
    assert AppSession.request_rerun is fragment_rerun._request_rerun
    assert fragment_rerun._ORIGINAL is not fragment_rerun._request_rerun
