"""specviz: routing only. Each page lives in pages/ and calls specviz for everything it shows."""
import streamlit as st

from specviz.ui.loading import sidebar

st.set_page_config(page_title="specviz — speculative decoding, step by step", layout="wide",
                   page_icon="🔎")  # an emoji favicon: a :material: one is fetched from the internet

PAGES = {
    "Learn": [
        st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("pages/step_through.py", title="Step through", icon=":material/footprint:", url_path="step"),
        st.Page("pages/breakeven.py", title="Break-even calculator", icon=":material/calculate:", url_path="breakeven"),
        st.Page("pages/trees.py", title="Trees", icon=":material/account_tree:", url_path="trees"),
    ],
    "Measure": [
        st.Page("pages/compare.py", title="Compare proposers", icon=":material/compare_arrows:", url_path="compare"),
        st.Page("pages/experiments.py", title="k / n experiments", icon=":material/science:", url_path="experiments"),
        st.Page("pages/lossless.py", title="Is it lossless?", icon=":material/balance:", url_path="lossless"),
        st.Page("pages/derivations.py", title="Derivations", icon=":material/functions:", url_path="derivations"),
        st.Page("pages/pitfalls.py", title="Tokenizers & checkpoints", icon=":material/warning:", url_path="pitfalls"),
    ],
    "Practice": [
        st.Page("pages/walkthrough.py", title="Walkthrough & interview prep", icon=":material/school:",
                url_path="walkthrough"),
        st.Page("pages/serve.py", title="Take it to a server", icon=":material/dns:", url_path="serve"),
        st.Page("pages/serving_reality.py", title="Serving reality", icon=":material/memory:",
                url_path="serving-reality"),
    ],
}

nav = st.navigation(PAGES)
sidebar()
nav.run()
