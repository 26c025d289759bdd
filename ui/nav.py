"""The article's sections in reading order: one registry for the navigation, the landing page's
links and each page's "next" link, so adding a page is one line here."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Section:
    number: str  # "00".."04", or "" for the landing page
    title: str
    path: str  # script path relative to the repo root, as st.navigation and AppTest see it
    url_path: str
    icon: str  # a Material icon
    blurb: str  # one line for the landing page
    short: str = ""  # the navigation bar's label (short, so every section fits one bar at 1280 px)
    prefix: str = ""  # the page's widget keys start with f"{prefix}_" (see ui.state)

    @property
    def label(self) -> str:
        return f"{self.number} {self.title}" if self.number else self.title

    @property
    def nav_label(self) -> str:
        short = self.short or self.title
        return f"{self.number} {short}" if self.number else short


SOURCES_PATH = "app_pages/sources.py"

HOME = Section("", "Where the GPU lies", "app_pages/home.py", "home", ":material/home:",
               "The thesis in a few lines.", short="Start")

SECTIONS: tuple[Section, ...] = (
    Section("00", "Two phases", "app_pages/two_phases.py", "two-phases", ":material/speed:",
            "Prefill saturates the tensor cores; decode streams every weight for a single token.",
            short="Phases", prefix="phases"),
    Section("01", "Continuous batching", "app_pages/batching.py", "continuous-batching",
            ":material/view_timeline:",
            "Static batches wait for their slowest request: utilization reads the same, useful work does "
            "not.", short="Batching", prefix="batching"),
    Section("02", "PagedAttention", "app_pages/paging.py", "paged-attention", ":material/grid_view:",
            "Pages handed out as tokens arrive fit several times more requests than reserving for the max.",
            short="Paging", prefix="paging"),
    Section("03", "Speculative decoding", "app_pages/speculative.py", "speculative-decoding",
            ":material/bolt:", "Decode idles the tensor cores: a cheap draft guesses, the target checks.",
            short="Speculation", prefix="spec"),
    Section("04", "What to watch instead", "app_pages/watch.py", "what-to-watch", ":material/monitoring:",
            "Utilization reads the same in every scenario; goodput, tensor activity and latency do not.",
            short="Watch", prefix="watch"),
    Section("05", "Under load", "app_pages/load.py", "under-load", ":material/stacked_line_chart:",
            "Prefill and decode share the GPU as requests arrive: chunking, prefix caching and "
            "disaggregation decide how much load it holds within the latency targets.", prefix="load"),
)


YOURS = Section("", "Your numbers", "app_pages/yours.py", "your-numbers", ":material/upload_file:",
                "Paste your engine's benchmark: the model's error on it, and assumptions fitted to it.",
                short="Yours")

SOURCES = Section("", "Sources", SOURCES_PATH, "sources", ":material/menu_book:",
                  "Where every figure comes from.")

#: Every page in the navigation's order.
ALL_PAGES: tuple[Section, ...] = (HOME, *SECTIONS, YOURS, SOURCES)


def next_section(path: str) -> Section | None:
    """The section after the one whose script is ``path`` (the landing page leads to 00)."""
    name = Path(path).name
    order = ALL_PAGES
    for current, following in itertools.pairwise(order):
        if Path(current.path).name == name:
            return following
    return None
