"""Size limits the code keeps (issue 34): no function over 60 lines outside the training prompts' data, no
module in specviz/ui/ over 250 lines. Read from the source with ast; nothing is imported or run."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_FUNCTION, MAX_UI_MODULE = 60, 250
# data, not steps: the training prompt tables; the browser harness's run (owned by the load-test work, issue 34 §5)
EXEMPT: set[tuple[str, str]] = set()   # (file, function) pairs allowed past the limit: none
EXEMPT_FILES = ("specviz/train/prompts",)


def sources() -> list[Path]:
    return sorted([*(ROOT / "specviz").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"])


def long_functions(path: Path, limit: int = MAX_FUNCTION) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in `path` longer than `limit` lines, its docstring included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > limit]


def test_the_check_finds_a_long_function(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("def short():\n    return 1\n\n\ndef long():\n" + "    x = 1\n" * 61)
    assert long_functions(f) == [("long", 62)]


def test_no_function_is_over_60_lines():
    found = []
    for path in sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EXEMPT_FILES):
            continue
        found += [f"{rel}: {name} ({n} lines)" for name, n in long_functions(path) if (rel, name) not in EXEMPT]
    assert not found, "cut these into named steps:\n" + "\n".join(found)


def test_no_ui_module_is_over_250_lines():
    big = [f"{p.name} ({n} lines)" for p in sorted((ROOT / "specviz" / "ui").glob("*.py"))
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_UI_MODULE]
    assert not big, "split these by job: " + ", ".join(big)


def test_no_two_test_files_share_a_name():
    """pytest imports test modules by basename (rootdir mode, no __init__.py in tests/): two files of one name in two
    folders stop the whole run at collection ("import file mismatch"), as a fresh clone's run did once."""
    from collections import Counter
    names = Counter(p.name for p in (ROOT / "tests").rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
