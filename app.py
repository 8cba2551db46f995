"""specviz: routing only. Each page lives in pages/ and calls specviz for everything it shows."""
import streamlit as st

from specviz.ui import lecture
from specviz.ui.loading import sidebar

st.set_page_config(page_title="specviz — speculative decoding, step by step", layout="wide",
                   page_icon="🔎")  # an emoji favicon: a :material: one is fetched from the internet

LIVE = ("pages/step_through.py", "pages/compare.py")  # the pages that replay recordings in lecture mode


ROUTES = {  # section: (page, title, :material: icon, URL path; "" for the default page)
    "Learn": [("pages/home.py", "Home", "home", ""),
              ("pages/step_through.py", "Step through", "footprint", "step"),
              ("pages/breakeven.py", "Break-even calculator", "calculate", "breakeven"),
              ("pages/trees.py", "Trees", "account_tree", "trees")],
    "Measure": [("pages/compare.py", "Compare proposers", "compare_arrows", "compare"),
                ("pages/experiments.py", "k / n experiments", "science", "experiments"),
                ("pages/lossless.py", "Is it lossless?", "balance", "lossless"),
                ("pages/derivations.py", "Derivations", "functions", "derivations"),
                ("pages/pitfalls.py", "Tokenizers & checkpoints", "warning", "pitfalls")],
    "Practice": [("pages/walkthrough.py", "Walkthrough & interview prep", "school", "walkthrough"),
                 ("pages/serve.py", "Take it to a server", "dns", "serve"),
                 ("pages/serving_reality.py", "Serving reality", "memory", "serving-reality"),
                 ("pages/capstone.py", "Capstone: configure a fleet", "hub", "capstone")],
}


def page(path: str, title: str, icon: str, url: str) -> st.Page:
    """A page; in lecture mode (recordings only, no model) a page that needs a live model says so in one line."""
    kw = dict(title=title, icon=f":material/{icon}:", default=not url)
    if lecture.on() and path not in LIVE:
        return st.Page(lecture.stub(title), url_path=url or "home", **kw)
    return st.Page(path, **kw, **(dict(url_path=url) if url else {}))


PAGES = {section: [page(*row) for row in rows] for section, rows in ROUTES.items()}

nav = st.navigation(PAGES)
sidebar()
nav.run()
