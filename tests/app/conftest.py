import apptools  # noqa: F401  (sets test-sized mode before any test module imports the app)
import pytest

from specviz.ui import loading as app_loading


@pytest.fixture(autouse=True)
def tiny_mode(monkeypatch):
    monkeypatch.setenv("SPECVIZ_TINY", "1")
    monkeypatch.setattr(app_loading, "TINY", True)  # in case another module imported it first


@pytest.fixture(autouse=True)
def no_run_cache(monkeypatch):
    """Every AppTest makes its own runs (the server-wide run cache off); tests of the cache turn it on."""
    from specviz.engine import runcache
    monkeypatch.setattr(runcache, "RUNS", runcache.RunCache(enabled=False))
