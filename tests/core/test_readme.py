"""The README stays a newcomer's page (issue 34 §7): at most 150 lines, the two commands first, and the history
and long measurements elsewhere (bench/README.md, docs/)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 150


def readme_problems(text: str) -> list[str]:
    """What keeps a README from being the newcomer's page: too long, or the two commands missing."""
    out = []
    if len(text.splitlines()) > MAX_LINES:
        out.append(f"{len(text.splitlines())} lines (at most {MAX_LINES})")
    for cmd in ("make app", "make test"):
        if cmd not in text:
            out.append(f"no '{cmd}'")
    return out


def test_the_readme_is_short_and_names_the_two_commands():
    assert readme_problems((ROOT / "README.md").read_text()) == []


def test_the_check_catches_a_lab_notebook():
    long = "make app\nmake test\n" + "a bench row\n" * MAX_LINES
    assert readme_problems(long) == [f"{MAX_LINES + 2} lines (at most {MAX_LINES})"]
    assert readme_problems("make app\n") == ["no 'make test'"]
