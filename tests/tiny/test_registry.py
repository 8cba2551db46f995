"""The method registry (engine/methods.REGISTRY) is the one place a method's facts live: every reader agrees
with it, a new entry reaches them, and the old scattered tables do not come back (issue 34 §1, §8)."""
import re
from pathlib import Path

import pytest

from specviz.core.errors import InputError
from specviz.engine import methods as M
from specviz.engine.models import tiny_llama

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=96, layers=2, hidden=32, seed=0)


def test_every_entry_is_consistent():
    from specviz.teach import serving as S
    for name, s in M.REGISTRY.items():
        assert s.name == name and s.label and s.family in (M.COPY, M.DRAFT_MODEL, M.HEADS, M.NONE)
        assert (s.artifact is not None) == s.trained, name                # trained = needs a file in models/
        if s.chain:                                                       # a tree's chain: same drafter, a chain
            c = M.REGISTRY[s.chain]
            assert s.tree and not c.tree and c.artifact == s.artifact, name
        if s.self_sized:
            assert s.k == M.SELF_SIZED_CAP and s.family == M.COPY, name
        if s.vllm:
            assert s.vllm in S.VLLM_METHODS or s.vllm in S.REMOVED, name
            assert "num_speculative_tokens" in s.vllm_keys, name
    assert M.self_sized("lookup") and not M.self_sized("lookup", "fixed") and M.self_sized("suffix")
    assert not M.self_sized("eagle") and M.draft_cap("eagle", 4) == 4 and M.draft_cap("suffix", 4) == 24


def test_the_copying_methods_build_without_weights_and_carry_their_name(target):
    for m in M.names(family=M.COPY):
        p = M.make_proposer(m, target)
        assert p.name == m
    with pytest.raises(InputError, match="unknown method 'telepathy'.*lookup"):
        M.make_proposer("telepathy", target)


def test_readers_take_their_lists_from_the_registry():
    from specviz.bench import plan, report
    from specviz.teach import serving, trees
    assert set(plan.UNTUNED) == set(M.names(family=M.COPY, bench=True))
    assert set(plan.TRAINED_METHODS) | set(plan.TREES) == set(report.LEARNED)
    assert all(M.REGISTRY[t].chain in plan.TRAINED_METHODS for t in plan.TREES)
    assert trees.PAIRS == M.tree_pairs() and all(M.REGISTRY[t].tree for _, t in trees.PAIRS.values())
    assert serving.FROM_SPECVIZ == M.to_vllm()
    for m in plan.UNTUNED:   # the bench's copying rows run the registry's defaults
        s = plan.default_spec(m)
        assert s.k == M.REGISTRY[m].k and s.n == M.REGISTRY[m].defaults.get("n", 3)
    for t in plan.TREES:
        assert plan.tree_spec(t).k == M.REGISTRY[t].k


def test_a_new_entry_is_one_line_away(monkeypatch, target):
    from specviz.cli import build_parser
    from specviz.proposers.lookup import PromptLookup
    new = M.MethodSpec("echo", "copies the last token", M.COPY, lambda t, o: PromptLookup(n_min=1, n_max=1))
    monkeypatch.setitem(M.REGISTRY, "echo", new)
    assert isinstance(M.make_proposer("echo", target), PromptLookup)
    assert "echo" in M.available_methods() and "echo" in M.try_methods(target, None)[0]
    gen = next(a for a in build_parser()._actions if a.dest == "command").choices["generate"]
    assert "copies the last token" in gen.format_help()


def test_the_scattered_tables_do_not_come_back():
    """The old copies of the registry's facts: a '-tree' name test, a second method table, a bypass of
    make_proposer that constructs a proposer class in a page, a lesson or the bench."""
    src = {p: p.read_text() for d in ("specviz", "pages") for p in (ROOT / d).rglob("*.py")}
    src[ROOT / "app.py"] = (ROOT / "app.py").read_text()
    banned = [r'endswith\("-tree"\)', r"\bNEEDS_ARTIFACT\b", r"\bTREE_DEPTH\b", r"\bMETHODS\s*=\s*\{",
              r"FROM_SPECVIZ\s*=\s*\{", r"\bPAIRS\s*=\s*\{", r"\bLEARNED\s*=\s*\(\"", r"UNTUNED\s*=\s*\(\""]
    constructors = r"\b(PromptLookup|DraftModel|SuffixProposer|Hybrid)\("
    allowed = {"proposers", "core"}          # where the classes live; the registry builds them
    for p, text in src.items():
        for pat in banned:
            assert not re.search(pat, text), f"{p.relative_to(ROOT)}: {pat}"
        rel = p.relative_to(ROOT)
        inside = rel.parts[1] if rel.parts[0] == "specviz" and len(rel.parts) > 2 else ""
        if inside not in allowed | {"train"} and rel.name != "methods.py":   # train/ evaluates its own builds
            assert not re.search(constructors, text), f"{rel} builds a proposer past make_proposer"


def test_the_eagle_size_counts_the_eagle_file_only(tmp_path):
    from specviz.teach.interview import artifact_bytes
    for name, size in (("eagle", 10), ("eagle3", 1000), ("medusa", 100)):
        (tmp_path / f"{name}.safetensors").write_bytes(b"x" * size)
    got = artifact_bytes(tmp_path)
    assert got["eagle"] == 10 and got["eagle3"] == 1000 and got["medusa"] == 100 and got["drafter"] == 0


def test_one_ratio_one_median_and_one_fine_tune_loader():
    """method ÷ plain is core.stats.ratio/speedup, medians are core.stats.median, and pages load the fine-tuned
    target through ui.loading's cache (issue 34 §3, §4): a hand-made copy of any of them fails here."""
    for p in [*(ROOT / "specviz").rglob("*.py"), *(ROOT / "pages").rglob("*.py")]:
        rel, text = p.relative_to(ROOT), p.read_text()
        if rel.parts[1] not in ("train",) and rel != Path("specviz/core/stats.py"):
            assert not re.search(r"tokens_per_s\s*/\s*\w+\.(plain_)?tokens_per_s", text), f"{rel}: a ratio by hand"
            assert "statistics.median" not in text, f"{rel}: statistics.median instead of core.stats.median"
        if rel.parts[0] == "pages":
            assert "load_finetuned_target" not in text, f"{rel}: the fine-tuned target loaded past the cache"


RATES = ("tokens_per_s", "decode_tokens_per_s", "tokens_per_pass", "alpha", "draft_acceptance_rate", "mean_k")


def run_record_copies(text: str, records: bool = False, measure: bool = False) -> list[str]:
    """What in one module's source would be a second run-level record (issue 34 §3): a class with a tokens/s field
    (records=False: outside core/records.py), a class whose tokens/s, τ, α, α̂ or k̄ divides its own counts, or a
    class called Measured that is not engine/measure's (measure=False), a *Measured that does not extend it, or a class
    that keeps a run record beside a speedup field (a Measured's numbers copied out of it)."""
    import ast
    out = []
    for c in (n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)):
        fields = {n.target.id: ast.unparse(n.annotation) for n in c.body
                  if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        if "speedup" in fields and any("RunSummary" in a for a in fields.values()) and not measure:
            out.append(f"{c.name}: a run record and a speedup copied out of a Measured")
        for node in c.body:
            names = [t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)]
            name = getattr(node, "name", None) or (names[0] if names else None)
            if name not in RATES:
                continue
            if isinstance(node, ast.AnnAssign) and name == "tokens_per_s" and not records:
                out.append(f"{c.name}.{name}: a copied tokens/s field")
            divides = any(isinstance(x, ast.BinOp) and isinstance(x.op, ast.Div) for x in ast.walk(node))
            if divides and not records and not isinstance(node, ast.AnnAssign):
                out.append(f"{c.name}.{name}: a rate recomputed from its own counts")
        bases = [getattr(b, "attr", getattr(b, "id", "")) for b in c.bases]
        if (c.name == "Measured" and not measure) or (c.name.endswith("Measured") and c.name != "Measured"
                                                      and "Measured" not in bases):
            out.append(f"class {c.name}: a second measured type")
    return out


def test_one_run_record_and_one_measured_type():
    """A run's numbers live in core/records.RunSummary and a measured comparison in engine/measure.Measured (its
    subclass SessionMeasured for sessions): the bench's row reads the record's tokens/s, τ, α, α̂ and k̄ through
    properties, a sweep's point holds its Measured (issue 34 §3). A class that copies a run's counts and divides
    them again, a tokens/s field outside the record, a record kept beside a copied speedup, or a second class
    called Measured fails here.
    Negative control: run_record_copies on the code before the change (`git show f985715:<path>`) names the bench's
    Result (tokens_per_s, decode_tokens_per_s, alpha, draft_acceptance_rate: each divided its own copied counts),
    the sweep's SweepPoint (summary and speedup copied out of its Measured) and teach/blockverify's own Measured;
    the snippet below keeps one of each kind in the test."""
    old = ("class Result:\n    ids: list\n    wall_s: float\n    tokens_per_s: float\n"
           "    @property\n    def alpha(self):\n        return self.accepted / self.tested\n"
           "class SweepPoint:\n    summary: RunSummary\n    speedup: float = 0.0\n"
           "class Measured:\n    rows: list\n")
    assert run_record_copies(old) == ["Result.tokens_per_s: a copied tokens/s field",
                                      "Result.alpha: a rate recomputed from its own counts",
                                      "SweepPoint: a run record and a speedup copied out of a Measured",
                                      "class Measured: a second measured type"]
    for p in [*(ROOT / "specviz").rglob("*.py"), *(ROOT / "pages").rglob("*.py")]:
        rel = p.relative_to(ROOT)
        got = run_record_copies(p.read_text(), records=rel == Path("specviz/core/records.py"),
                                measure=rel == Path("specviz/engine/measure.py"))
        assert not got, f"{rel}: {got}"
