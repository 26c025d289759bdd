"""The "How this is computed" and "Data" expanders send their contents only while open (a page's
rerun then skips them), and open with their contents, without an exception, on every page."""

from __future__ import annotations

import pytest

from tests.conftest import open_app, open_data, open_how

# Page -> the key its data_expander is given.
DATA_KEYS = {
    "app_pages/two_phases.py": "phases_data",
    "app_pages/batching.py": "batching_data",
    "app_pages/paging.py": "paging_data",
    "app_pages/speculative.py": "spec_data",
    "app_pages/watch.py": "watch_data",
    "app_pages/load.py": "load_data",
}


def _texts(at) -> str:
    return " ".join(str(m.value) for m in at.markdown)


@pytest.mark.parametrize("path", list(DATA_KEYS))
def test_expanders_send_their_contents_only_when_open(path):
    at = open_app(path)
    assert not at.exception
    assert "Assumptions and simplifications" not in _texts(at)
    tables = len(at.dataframe)
    assert not at.get("download_button")
    open_how(at)
    assert not at.exception, [e.value for e in at.exception]
    assert "Assumptions and simplifications" in _texts(at)
    assert "**Sources**" in _texts(at)
    open_data(at, DATA_KEYS[path])
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe) > tables
    assert len(at.get("download_button")) == len(at.dataframe) - tables
