"""specviz: routing only. Each page lives in pages/ and calls specviz for everything it shows."""
import streamlit as st

from specviz.ui import lecture
from specviz.ui.loading import sidebar

st.set_page_config(page_title="specviz — speculative decoding, step by step", layout="wide",
                   page_icon="🔎")  # an emoji favicon: a :material: one is fetched from the internet

LIVE = ("pages/step_through.py", "pages/compare.py")  # the pages that replay recordings in lecture mode


def page(path: str, title: str, **kw) -> st.Page:
    """A page; in lecture mode (recordings only, no model) a page that needs a live model says so in one line."""
    if lecture.on() and path not in LIVE:
        return st.Page(lecture.stub(title), title=title, url_path=kw.pop("url_path", "home"), **kw)
    return st.Page(path, title=title, **kw)


PAGES = {
    "Learn": [
        page("pages/home.py", title="Home", icon=":material/home:", default=True),
        page("pages/step_through.py", title="Step through", icon=":material/footprint:", url_path="step"),
        page("pages/breakeven.py", title="Break-even calculator", icon=":material/calculate:", url_path="breakeven"),
        page("pages/trees.py", title="Trees", icon=":material/account_tree:", url_path="trees"),
    ],
    "Measure": [
        page("pages/compare.py", title="Compare proposers", icon=":material/compare_arrows:", url_path="compare"),
        page("pages/experiments.py", title="k / n experiments", icon=":material/science:", url_path="experiments"),
        page("pages/lossless.py", title="Is it lossless?", icon=":material/balance:", url_path="lossless"),
        page("pages/derivations.py", title="Derivations", icon=":material/functions:", url_path="derivations"),
        page("pages/pitfalls.py", title="Tokenizers & checkpoints", icon=":material/warning:", url_path="pitfalls"),
    ],
    "Practice": [
        page("pages/walkthrough.py", title="Walkthrough & interview prep", icon=":material/school:",
                url_path="walkthrough"),
        page("pages/serve.py", title="Take it to a server", icon=":material/dns:", url_path="serve"),
        page("pages/serving_reality.py", title="Serving reality", icon=":material/memory:",
                url_path="serving-reality"),
        page("pages/capstone.py", title="Capstone: configure a fleet", icon=":material/hub:", url_path="capstone"),
    ],
}

nav = st.navigation(PAGES)
sidebar()
nav.run()
