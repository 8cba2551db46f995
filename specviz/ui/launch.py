"""Start the app: `python -m specviz.ui.launch [streamlit options]` (what `make app` runs).

Same as `streamlit run app.py`, with one fix. Streamlit treats a folder named `pages/` beside the
entry script as a legacy multipage app until the first run that calls st.navigation. So a fresh
server whose first visitor opens a deep link (say /compare) would run that page file alone, with
no sidebar settings and a list of raw file names. app.py routes with st.navigation, so the
legacy mode is switched off before any session starts.
"""
import sys
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

APP = Path(__file__).resolve().parents[2] / "app.py"


def main() -> None:
    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", str(APP), *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
