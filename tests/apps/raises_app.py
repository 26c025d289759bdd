"""An app that raises: for checking that readers see no error details (client.showErrorDetails)."""

import streamlit as st

st.title("Raises")
raise RuntimeError("secret-detail-1234 in /srv/app/internal.py")
