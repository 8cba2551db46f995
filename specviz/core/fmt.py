"""How a number is written in a table, a metric or a line of text: one place, so that a value that does not
exist (no draft tested, nothing measured) always reads '–' and never a raw None."""

DASH = "–"


def num(x, spec: str = ".2f", suffix: str = "") -> str:
    """x written with a format spec (and a suffix such as '×'), or DASH when there is no value."""
    return DASH if x is None else f"{x:{spec}}{suffix}"


def cell(v, spec: str = ".2f"):
    """A table cell: a float to spec, None as DASH, anything else (ints, text) as it is."""
    return DASH if v is None else f"{v:{spec}}" if isinstance(v, float) else v


def cells(rows: list[dict], spec: str = ".2f", cols: list[str] | None = None) -> list[dict]:
    """Rows of a table as text cells (cell() on every value; only `cols`, in that order, when given)."""
    return [{c: cell(r.get(c), spec) for c in (cols or r)} for r in rows]
