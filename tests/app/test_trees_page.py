"""AppTest for the Trees page in test-sized mode: the shipped heads do not fit the tiny target, so the
page must say so in one line (no traceback); the drawing itself is tested in tests/tiny/test_trees.py."""
import os
from pathlib import Path

os.environ["SPECVIZ_TINY"] = "1"  # before the app (and specviz.ui.support) is imported

from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_trees_page_explains_and_refuses_heads_of_another_shape():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/trees.py").run()
    assert not at.exception
    assert "tree attention mask" in " ".join(m.value for m in at.markdown)
    at.button(key="tr_run").click().run()
    assert not at.exception
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "hidden size" in errs[0], errs
