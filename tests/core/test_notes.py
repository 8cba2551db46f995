"""The notes name what the app runs correctly: no shipped method is listed under 'does not run'."""
from specviz.engine.methods import REGISTRY as METHODS
from specviz.teach import notes as NOTES


def test_home_does_not_list_a_shipped_method_as_not_run():
    runs, not_run = NOTES.OTHER_PROPOSERS.split("**Proposers this app does not run**")
    assert "EAGLE-3" in runs and "Suffix decoding" in runs and "eagle3" in METHODS and "suffix" in METHODS
    assert "EAGLE-3" not in not_run and "uffix" not in not_run


def test_temperature_note_says_usually_not_always():
    assert "usually" in NOTES.TEMPERATURE and "not always" in NOTES.TEMPERATURE.lower().replace("*", "")
