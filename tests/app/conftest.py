import apptools  # noqa: F401  (sets test-sized mode before any test module imports the app)
import pytest

from specviz.ui import support as app_support


@pytest.fixture(autouse=True)
def tiny_mode(monkeypatch):
    monkeypatch.setenv("SPECVIZ_TINY", "1")
    monkeypatch.setattr(app_support, "TINY", True)  # in case another module imported it first
