"""Where the GPU lies: an interactive explainer of LLM inference serving.

The entrypoint: page config, the global setup (GPU, model, assumptions) in the sidebar, and the
navigation over the article's sections. Pages live in app_pages/ (not pages/: see the README).
"""

import contextlib
from pathlib import Path

from ui.fragment_rerun import install as install_fragment_rerun

# First, before the heavy imports: a page rerun this server process does not know reruns the whole app
# (ui/fragment_rerun.py). Once per process; a reader may be waiting on it right after a restart.
install_fragment_rerun()

import streamlit as st  # noqa: E402

from ui.layout import PageStopped, note_page, page_style  # noqa: E402
from ui.nav import ALL_PAGES, HOME  # noqa: E402
from ui.perf import SCRIPT_LOCK, freeze_startup_objects  # noqa: E402
from ui.setup import render_setup_controls, setup_from_state, setup_read_wrong, use_setup  # noqa: E402
from ui.state import app_rerun_requested, remember_pages  # noqa: E402
from ui.url_check import STOPPED_KEY, raw_params_on_first_run, show_rejected  # noqa: E402
from ui.watchdog import install as install_watchdog  # noqa: E402

# The favicon is a file served by this server: a ":material/..." page icon is fetched from Google's font host.
st.set_page_config(page_title="Where the GPU lies", page_icon=Path(__file__).parent / "ui" / "favicon.svg",
                   layout="wide")

pages = [
    st.Page(s.path, title=s.nav_label, icon=s.icon, url_path=None if s is HOME else s.url_path,
            default=s is HOME)
    for s in ALL_PAGES
]
page = st.navigation(pages, position="top")
raw_params = raw_params_on_first_run()  # before any widget consumes them
remember_pages()  # before the page runs: keeps each page's settings for Back and for coming back
page_style()
url_notice = st.container()
# On a rerun the sidebar's controls already hold this run's values: the page is drawn first and the
# sidebar after it, so the chart a reader moved is not queued behind the sidebar's two dozen elements
# (ui.setup.setup_from_state). A session's first run draws the sidebar first: its values come from it.
early_setup = setup_from_state()
if early_setup is None:
    with st.sidebar:
        render_setup_controls()
else:
    use_setup(early_setup)


@st.fragment
def _page_body() -> None:
    """The page as a fragment: a widget on it reruns the page alone, not the entrypoint (navigation,
    the sidebar's setup: a third of a rerun's elements). The sidebar's widgets rerun everything."""
    # Streamlit lets the page st.navigation returned run once per run of the entrypoint; a fragment's
    # rerun runs it again without the entrypoint (Streamlit 1.67's flag; tests/browser cover it).
    page._can_be_called = True
    note_page(page.url_path)  # the pause after a page's main chart is for redraws (ui.layout)
    st.session_state[STOPPED_KEY] = False  # stop_page sets it
    # One reader's run at a time (ui/perf.py); a page that ended early said why (ui.layout.stop_page).
    with SCRIPT_LOCK, contextlib.suppress(PageStopped):
        page.run()
    remember_pages()
    if app_rerun_requested():  # a page's control changed the setup: the sidebar redraws
        st.rerun(scope="app")


def _sidebar_after_the_page() -> None:
    """The sidebar, drawn after a page that was drawn with the setup read from its widgets' state;
    should it draw another setup, the app runs again with the sidebar first (``setup_read_wrong``)."""
    with st.sidebar:
        drawn = render_setup_controls()
    if setup_read_wrong(early_setup, drawn):
        st.rerun(scope="app")


try:
    _page_body()
finally:  # the sidebar is drawn even where the page failed or the run is being replaced
    if early_setup is not None:
        _sidebar_after_the_page()
show_rejected(raw_params, url_notice, page.url_path)
install_watchdog()  # a page whose connection is lost for good reloads itself (ui/watchdog.py)
freeze_startup_objects()  # once per process: keeps garbage collection cheap (ui/perf.py)
