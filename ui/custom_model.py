"""The sidebar's "Custom (paste config.json)" model: a text area and a file uploader, read by
``sim.configs`` (parsed with ``json``, never evaluated), and carried in the link as ``cfg=``.

The text comes from the reader (or from whoever wrote a link), so none of it is rendered as markup:
messages are fixed text, and what the loader says about the config goes in a code block
(``st.code`` renders neither markdown nor HTML). A config the loader cannot read or express is
refused with its reason and the page shows the default model instead.
"""

from __future__ import annotations

import streamlit as st

from sim.configs import (
    MAX_CONFIG_BYTES,
    ConfigError,
    decode_spec,
    encode_spec,
    load_text,
    model_from_spec,
    too_large,
)
from sim.models import Model
from ui.state import drop_over_cap
from ui.url_check import REASONS_KEY

CUSTOM_MODEL = "Custom (paste config.json)"
#: The link's parameter (and session key) holding the custom model's fields.
PARAM = "cfg"
TEXT_KEY, FILE_KEY = "custom_cfg_text", "custom_cfg_file"
#: The size in bytes of a paste over MAX_CONFIG_BYTES, which the text box then drops (0: none).
TOO_LARGE_KEY = "_custom_cfg_too_large"
PLACEHOLDER = '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, ...}'


def _name(family: str) -> str:
    return f"Custom model ({family})"


def summary(model: Model) -> str:
    """One line on what the loader read (numbers and a whitelisted family name only)."""
    parts = [model.name, f"{model.n_layers} layers", f"hidden {model.hidden:,}",
             f"{model.n_heads}/{model.n_kv_heads} heads"]
    if model.n_experts:
        parts.append(f"{model.n_experts} experts, top-{model.experts_per_token}")
    if model.is_mla:
        parts.append(f"MLA latent {model.kv_lora_rank}+{model.qk_rope_head_dim}")
    if model.window_layers:
        parts.append(f"{model.window_layers} layers windowed at {model.sliding_window:,}")
    return ", ".join(parts)


def _problem(headline: str, detail: str) -> None:
    st.error(headline, icon=":material/error:")
    st.code(detail, language=None, wrap_lines=True)


def forget() -> None:
    """The custom model is not selected: keep it out of the link, and drop the word on a paste that
    was over the cap (coming back to the custom model starts afresh)."""
    if PARAM in st.query_params:
        del st.query_params[PARAM]
    st.session_state.pop(TOO_LARGE_KEY, None)


def render_custom_model() -> Model | None:
    """Draw the paste / upload controls and return the custom model (None: nothing usable yet,
    with the reason shown). Call inside the sidebar, under the model selector."""
    # No max_chars: Streamlit's text area drops a paste longer than that whole, without a word. A paste
    # over MAX_CONFIG_BYTES is dropped here instead, and the sidebar says why (ui.state.drop_over_cap).
    text = st.text_area("config.json", key=TEXT_KEY, height=110, placeholder=PLACEHOLDER,
                        on_change=drop_over_cap(TEXT_KEY, TOO_LARGE_KEY, MAX_CONFIG_BYTES,
                                                lambda t: len(t.encode("utf-8", "replace"))),
                        help="A Hugging Face config.json (dense Llama/Mistral/Qwen/GPT-J, Mixtral, "
                             "Qwen3-MoE, DeepSeek-V3 MLA, gpt-oss, Llama 4). Read as JSON, never run. "
                             f"At most {MAX_CONFIG_BYTES // 1024} KB.")
    upload = st.file_uploader("or upload config.json (64 KB at most)", type=["json"], key=FILE_KEY,
                              max_upload_size=1, help=f"At most {MAX_CONFIG_BYTES // 1024} KB.")
    raw: str | bytes | None = None
    if upload is None and st.session_state.get(TOO_LARGE_KEY):
        _problem("This config cannot be used, so the default model is shown:",
                 too_large(st.session_state[TOO_LARGE_KEY]))
        return None
    if upload is not None:
        if upload.size > MAX_CONFIG_BYTES:
            _problem("That file is too large to be a config.json.",
                     f"{upload.size:,} bytes; at most {MAX_CONFIG_BYTES:,} are read.")
            return _from_link()
        raw = upload.getvalue()
    elif text and text.strip():
        raw = text
    if raw is None:
        model = _from_link()
        if model is None:
            st.info("Paste a config.json or upload one; until then the default model is shown.",
                    icon=":material/content_paste:")
        return model
    try:
        model, spec = load_text(raw, name="Custom model")
    except ConfigError as err:
        _problem("This config cannot be used, so the default model is shown:", str(err))
        return None
    model = model_from_spec(spec, name=_name(spec.family), source="pasted config.json")
    encoded = encode_spec(spec)
    st.caption(f"Read as {summary(model)}.")
    st.session_state[PARAM] = encoded
    if st.query_params.get(PARAM) != encoded:
        st.query_params[PARAM] = encoded
    if spec.notes:
        st.caption("Read, with notes:")
        st.code("\n".join(spec.notes), language=None, wrap_lines=True)
    return model


def _from_link() -> Model | None:
    """The custom model the link (or this session) carries, or None (a bad one says why)."""
    raw = st.query_params.get(PARAM) or st.session_state.get(PARAM)
    if not raw:
        return None
    try:
        spec = decode_spec(raw)
        model = model_from_spec(spec, name=_name(spec.family), source="config.json fields from the link")
    except ConfigError as err:
        st.session_state[PARAM] = ""
        st.session_state.setdefault(REASONS_KEY, {})[PARAM] = str(err)  # the link's notice says it too
        forget()
        _problem("The custom model in this link cannot be used, so the default model is shown:", str(err))
        return None
    st.session_state[PARAM] = raw
    if st.query_params.get(PARAM) != raw:
        st.query_params[PARAM] = raw
    st.caption(f"From the link: {summary(model)}. Paste a config.json to replace it.")
    return model
