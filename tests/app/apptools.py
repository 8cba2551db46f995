"""What the AppTests share: test-sized mode (SPECVIZ_TINY=1: a tiny random target instead of the real
model), the app's path, and opening a page through st.navigation as a user would."""
import os
from pathlib import Path

os.environ["SPECVIZ_TINY"] = "1"  # before the app (and specviz.ui.loading) is imported

from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def ok(at: AppTest) -> AppTest:
    """The page ran without an exception box."""
    assert not at.exception, [e.value for e in at.exception]
    return at


def page(name: str) -> AppTest:
    """The app opened at Home, then switched to pages/<name>.py."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page(f"pages/{name}.py").run()
    return ok(at)
