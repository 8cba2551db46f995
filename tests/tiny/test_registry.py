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
