"""One reader's page runs at a time in a server process (``ui.perf.SCRIPT_LOCK``): with many readers
their runs interleaved on the interpreter's lock and the switching cost a third of the server's CPU
(README, "Many readers"). The app takes it around the page's run."""

from __future__ import annotations

import threading

from tests.conftest import open_app
from ui.perf import SCRIPT_LOCK


def test_a_run_waits_while_another_readers_run_holds_the_lock():
    at = open_app("app_pages/two_phases.py")
    assert not at.exception
    slider = at.select_slider(key="phases_batch")
    before = slider.value
    slider.set_value(64 if before != 64 else 16)
    reader = threading.Thread(target=at.run, daemon=True)
    with SCRIPT_LOCK:  # another reader's run, in progress
        reader.start()
        reader.join(timeout=2.0)  # a run of this page takes well under that on its own
        waiting = reader.is_alive()
    reader.join(timeout=60)
    assert waiting, "the run went ahead while another reader's run held the lock"
    assert not reader.is_alive() and not at.exception
    assert at.select_slider(key="phases_batch").value != before  # and then it went through
