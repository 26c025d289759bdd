"""Page furniture shared by every section: header and lede, the two expanders, the next link."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.nav import SOURCES_PATH, next_section
from ui.setup import current_setup
from ui.theme import PLOTLY_CONFIG


def header(number: str, title: str, lede: str) -> None:
    """Section number and title, the reader's current setup, and the lede paragraph."""
    st.title(f"{number} · {title}" if number else title)
    st.caption(f"Computed for **{current_setup().label}** · change it in the sidebar.")
    st.markdown(lede)


def metric_row():
    """A row for headline metrics that wraps on narrow screens (2 a row on a phone, 4 on a laptop)
    instead of stacking one per line as ``st.columns`` does."""
    return st.container(horizontal=True, wrap=True, gap="small")


def metric_slots(n: int) -> list:
    """A drop-in for ``st.columns(n)`` when every column holds one metric: ``n`` handles on one
    wrapping row (``metric_row``), so ``slots[i].metric(...)`` keeps its order on a laptop and wraps
    two a line on a phone instead of stacking one per line."""
    row = metric_row()
    return [row] * n


def chart(fig, *, key: str, alt: str, title: str | None = None) -> None:
    """A Plotly chart with its title above it as text (so a wrapping legend never hides it), a
    stable key, alt text for screen readers, and the house config."""
    if title:
        st.markdown(f"**{title}**")
    st.plotly_chart(fig, key=key, alt=alt, config=PLOTLY_CONFIG, width="stretch")


def how_computed(body_md: str, assumptions: list[str], sources: list[str]) -> None:
    """The "How this is computed" expander: equations, the simplifications, and the sources."""
    with st.expander("How this is computed", icon=":material/functions:"):
        st.markdown(body_md)
        st.markdown("**Assumptions and simplifications**")
        st.markdown("\n".join(f"- {a}" for a in assumptions))
        st.markdown("**Sources**")
        st.markdown("\n".join(f"- {s}" for s in sources))
        st.page_link(SOURCES_PATH, label="All sources, in one place", icon=":material/menu_book:")


def data_expander(frames: dict[str, pd.DataFrame], key: str) -> None:
    """The "Data" expander: each table behind the charts, with a CSV download."""
    with st.expander("Data", icon=":material/table:"):
        for i, (name, frame) in enumerate(frames.items()):
            st.markdown(f"**{name}**")
            st.dataframe(frame, hide_index=True, width="stretch")
            st.download_button(  # the CSV is made when clicked, not on every rerun
                f"Download {name} (CSV)", lambda frame=frame: frame.to_csv(index=False).encode(),
                file_name=f"{key}_{i}.csv", mime="text/csv", key=f"{key}_csv_{i}",
                icon=":material/download:",
            )


def next_link(current_path: str) -> None:
    """A link to the next section, at the end of every page."""
    following = next_section(current_path)
    st.divider()
    if following is None:
        st.caption("That is the whole story.")
        return
    st.page_link(following.path, label=f"Next: {following.label} →", icon=following.icon)
