"""Where the GPU lies: an interactive explainer of LLM inference serving.

The entrypoint: page config, the global setup (GPU, model, assumptions) in the sidebar, and the
navigation over the article's sections. Pages live in app_pages/ (not pages/: see the README).
"""

import contextlib
from pathlib import Path

import streamlit as st

from ui.layout import PageStopped, page_style
from ui.nav import ALL_PAGES, HOME
from ui.perf import freeze_startup_objects
from ui.setup import render_setup_controls
from ui.state import remember_pages
from ui.url_check import raw_params_on_first_run, show_rejected
from ui.watchdog import install as install_watchdog

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
with st.sidebar:
    render_setup_controls()
url_notice = st.container()
with contextlib.suppress(PageStopped):  # a page that ended early said why (ui.layout.stop_page)
    page.run()
show_rejected(raw_params, url_notice)
install_watchdog()  # a page whose connection is lost for good reloads itself (ui/watchdog.py)
freeze_startup_objects()  # once per process: keeps garbage collection cheap (ui/perf.py)
