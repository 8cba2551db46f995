"""The architecture as a test: import-linter's contracts in pyproject.toml ([tool.importlinter]) hold.

Layers point one way (pages -> ui -> viz | teach -> bench | train -> engine -> proposers -> core), core never
imports transformers, nothing the app or the bench runs imports specviz.train, and no package's modules import
each other in a cycle. pages/ is not a package: run from the repository root, Python sees it as a namespace
package, so the contracts cover it; app.py (a top-level module import-linter cannot take) is checked here.
"""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LINT, "--no-cache", "--config", str(root / "pyproject.toml")],
                          cwd=root, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=300)


def test_the_import_contracts_hold():
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


def test_the_contracts_catch_an_import_that_climbs(tmp_path):
    """The same check on a copy of the tree where engine imports the UI: it must fail, naming the import."""
    for name in ("specviz", "pages"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    measure = tmp_path / "specviz" / "engine" / "measure.py"
    measure.write_text(measure.read_text() + "\nfrom specviz.ui import loading  # climbs two layers\n")
    r = lint(tmp_path)
    assert r.returncode != 0
    assert "specviz.engine is not allowed to import specviz.ui" in r.stdout, r.stdout


def test_app_imports_only_streamlit_and_the_ui():
    tree = ast.parse((ROOT / "app.py").read_text())
    mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert {m for m in mods if m != "streamlit" and not m.startswith("specviz.ui")} == set(), mods
