"""specviz: routing only. Each page lives in pages/ and calls specviz for everything it shows."""
import streamlit as st

from specviz.ui import lecture
from specviz.ui.loading import sidebar
from specviz.ui.routes import ROUTES, Route

st.set_page_config(page_title="specviz — speculative decoding, step by step", layout="wide",
                   page_icon="🔎")  # an emoji favicon: a :material: one is fetched from the internet

LIVE = ("pages/step_through.py", "pages/compare.py")  # the pages that replay recordings in lecture mode


def page(r: Route) -> st.Page:
    """A page; in lecture mode (recordings only, no model) a page that needs a live model says so in one line."""
    kw = dict(title=r.title, icon=r.material, default=not r.url)
    if lecture.on() and r.path not in LIVE:
        return st.Page(lecture.stub(r.title), url_path=r.url or "home", **kw)
    return st.Page(r.path, **kw, **(dict(url_path=r.url) if r.url else {}))


PAGES: dict[str, list[st.Page]] = {}
for route in ROUTES:   # specviz/ui/routes.json: every page's section, title, icon and URL
    PAGES.setdefault(route.section, []).append(page(route))

nav = st.navigation(PAGES)
after_page = sidebar()
nav.run()
after_page()   # a page that waited for the model's load: the sidebar now says it has loaded
