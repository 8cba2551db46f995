"""core/fmt: a value that does not exist reads '–' in every table and metric, never a raw None."""
from specviz.core import fmt as F


def test_num_writes_the_value_with_its_spec_and_a_dash_for_none():
    assert F.num(0.5) == "0.50"
    assert F.num(0.5, ".0%") == "50%"
    assert F.num(1.234, ".2f", "×") == "1.23×"
    assert F.num(None) == F.DASH == "–"
    assert F.num(None, ".2f", "×") == "–"          # no suffix on a missing value
    assert F.num(0.0) == "0.00"                     # zero is a value, not a missing one


def test_cells_format_floats_only_and_keep_the_asked_columns_in_order():
    rows = [{"name": "lookup", "k": 4, "tau": 2.3456, "alpha": None}]
    assert F.cells(rows) == [{"name": "lookup", "k": 4, "tau": "2.35", "alpha": "–"}]
    assert F.cells(rows, ".4f") == [{"name": "lookup", "k": 4, "tau": "2.3456", "alpha": "–"}]
    assert list(F.cells(rows, cols=["tau", "missing"])[0].items()) == [("tau", "2.35"), ("missing", "–")]
