"""Sources: every figure the app uses and where it comes from."""

import streamlit as st

from sim.hardware import GPUS
from sim.models import ALL_MODELS
from ui.glossary import GLOSSARY
from ui.sources import GPU_PRICES, PAPERS


def _md(text: str) -> str:
    """Our own source text in markdown, its dollar signs escaped (two on a line would render as math)."""
    return text.replace("$", "\\$")


st.title("Sources")
st.markdown("Every number the app starts from, and where it comes from. Everything else on screen is "
            "computed from these by the models in `sim/`.")

st.subheader("Glossary")
st.caption("Each word means one thing on every page; the metrics' help texts use these definitions.")
with st.container(key="sources_glossary"):
    for term, definition in GLOSSARY.items():
        st.markdown(f"**{term}**: {definition}")

st.subheader("GPUs")
# Numbers formatted by column, every row shown (height="content"); the sources, long sentences that a
# table cell cuts off, are listed under each table instead.
_num = st.column_config.NumberColumn
st.dataframe(
    [{"GPU": g.name, "BF16 dense TFLOP/s": f"{g.bf16_flops / 1e12:,.0f}",
      "FP8 dense TFLOP/s": f"{g.fp8_flops / 1e12:,.0f}" if g.fp8_flops else "–",
      "HBM TB/s": g.hbm_bandwidth / 1e12, "Memory GiB": g.hbm_bytes / 2**30,
      "Ridge (BF16) FLOP/B": round(g.ridge_point())} for g in GPUS.values()],
    hide_index=True, width="stretch", height="content",
    # Both rates as text with thousands separators (FP8 has a '–'), right-aligned as numbers are.
    column_config={"BF16 dense TFLOP/s": st.column_config.TextColumn(alignment="right"),
                   "FP8 dense TFLOP/s": st.column_config.TextColumn(alignment="right"),
                   "HBM TB/s": _num(format="%.2f"),
                   "Memory GiB": _num(format="%.1f"), "Ridge (BF16) FLOP/B": _num(format="%.0f")},
)
st.caption("Dense tensor-core rates (datasheets headline 2:4-sparse numbers; these are half of those). "
           "FP8 '–': no FP8 tensor cores (FP8 weights then run BF16 math).")
with st.expander("Where each GPU's figures come from"):
    st.markdown("\n".join(f"- **{g.name}**: {_md(g.source)}" for g in GPUS.values()))

st.subheader("GPU prices")
st.dataframe([{"GPU": name, "$ per GPU-hour": price} for name, (price, _) in GPU_PRICES.items()],
             hide_index=True, width="stretch", height="content",
             column_config={"$ per GPU-hour": _num(format="$%.2f")})
st.caption("Typical on-demand rental prices, the default of the sidebar's price (editable); they spread "
           "2-5x across providers and terms.")
with st.expander("Where each price comes from"):
    st.markdown("\n".join(f"- **{name}**: {_md(source)}" for name, (_, source) in GPU_PRICES.items()))

st.subheader("Models")
st.dataframe(
    [{"Model": m.name, "Layers": m.n_layers, "Hidden": m.hidden, "Heads": m.n_heads,
      "KV heads": m.n_kv_heads, "Head dim": m.head_dim, "Params (B)": round(m.n_params / 1e9, 3),
      "KV KiB/token (bf16)": m.kv_bytes_per_token / 1024, "Source": m.source} for m in ALL_MODELS.values()],
    hide_index=True, width="stretch", height="content",
    column_config={"Params (B)": _num(format="%.2f"), "KV KiB/token (bf16)": _num(format="%.1f"),
                   "Source": st.column_config.TextColumn("Source", width="large")},
)
st.caption("Parameter counts are computed from each config and match the official totals.")

st.subheader("Papers, measurements and definitions")
for s in PAPERS:
    citation = f"[{s.citation}]({s.url})" if s.url else s.citation
    st.markdown(f"**{s.topic}** ({s.used_for}): {s.figures}.  \n{citation}")
