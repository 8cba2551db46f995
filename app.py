"""specviz: routing only. Each page lives in pages/ and calls specviz for everything it shows."""
import streamlit as st

from specviz.app_support import sidebar

st.set_page_config(page_title="specviz — speculative decoding, step by step", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
]

nav = st.navigation(PAGES)
sidebar()
nav.run()
