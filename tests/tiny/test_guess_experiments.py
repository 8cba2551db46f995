"""Every guess the walkthrough and the interview ask names the experiment that scores it: the text shown is the
description of the runs the measurement then makes, read back from the proposers and settings that actually ran
(issue 34 §2: the prompts said "lookup, k = 4, n = 3" while the runs used the match rule)."""
import pytest

from specviz.engine import measure, methods as M, workloads
from specviz.engine.experiment import Experiment, Setting
from specviz.engine.methods import encode_prompt
from specviz.engine.models import DEFAULT, load_tokenizer, tiny_llama
from specviz.teach import interview as I
from specviz.teach.guess import asked


@pytest.fixture(scope="module")
def models():
    tok = load_tokenizer(DEFAULT)
    out = []
    for seed, layers in ((0, 2), (1, 1)):
        m = tiny_llama(vocab_size=len(tok), layers=layers, hidden=32, seed=seed, max_positions=2048)
        m.tokenizer = tok
        out.append(m)
    return out


def spy(monkeypatch):
    """Record every run through the measuring path: (setting, prompt ids, temperature, new tokens)."""
    seen, real = [], measure.run

    def run(target, proposer, prompt_ids, cfg, eos_token_id=None):
        seen.append((Setting.of(proposer, cfg), tuple(prompt_ids), cfg.sampling.temperature, cfg.max_new_tokens))
        return real(target, proposer, prompt_ids, cfg, eos_token_id)
    monkeypatch.setattr(measure, "run", run)
    return seen


def observed(seen, plan: Experiment, tok) -> Experiment:
    """The experiment that ran, rebuilt from the recorded runs of the plan's mode (warm-ups left out)."""
    names = {tuple(encode_prompt(tok, w.prompt, w.chat)): w.name for w in workloads.BY_NAME.values()}
    runs = [r for r in seen if r[2] == plan.temperature]
    n_new = max(r[3] for r in runs)
    timed = [r for r in runs if r[3] == n_new]
    settings = tuple(dict.fromkeys(r[0] for r in timed if r[0].method != "plain"))
    ws = tuple(dict.fromkeys(names[r[1]] for r in timed))
    repeats = sum(1 for r in timed if r[0] == settings[0] and names[r[1]] == ws[0])
    return Experiment(settings, ws, n_new, plan.temperature, repeats=repeats,
                      against_plain=any(r[0].method == "plain" for r in timed), target=plan.target)


ITEMS = [(f"stop {s.title}", s) for s in I.STOPS] + [(f"question {q.key}", q) for q in I.QUESTIONS]


@pytest.mark.parametrize("item", [x for _, x in ITEMS], ids=[n for n, _ in ITEMS])
def test_the_guess_shown_is_the_run_that_scores_it(monkeypatch, models, item):
    target, drafter = models
    seen = spy(monkeypatch)
    g = I.guess_for(item, small=True, with_drafter=True)
    plan = I.PLANS.get(item.measure)
    out = item.measure(target, drafter, True)
    if plan is None:     # a guess about no decoding run (a simulation, a file size, a config): nothing may decode
        assert not seen, f"{item.measure.__name__} decodes, so its guess must name a plan (PLANS)"
        return
    ex = plan(True, True)
    assert asked(g).endswith(f"({ex.describe()})")                  # the text shown names the plan ...
    if out["run"].startswith("nothing measured"):                     # (heads that do not fit a tiny target)
        assert not [r for r in seen if r[0].method != "plain"]
        return
    assert observed(seen, ex, target.tokenizer).describe() == ex.describe()   # ... and the plan is what ran
    assert out["run"].startswith(ex.describe())                         # "What ran" says the same


def test_a_drifted_prompt_is_caught(monkeypatch, models):
    """Negative control: the old prompt's experiment (lookup, fixed k = 4, n = 3) is not what the run makes."""
    target, drafter = models
    seen = spy(monkeypatch)
    I.lookup_on_translation(target, drafter, True)
    old = I.plan_translation(True, True)
    old = Experiment((Setting.resolve("lookup", 4, 3, "fixed"),), old.workloads, old.new_tokens, old.temperature)
    assert observed(seen, old, target.tokenizer).describe() != old.describe()


def test_the_pages_guesses_are_their_runs(monkeypatch, models):
    """Trees (chain vs tree on tiny heads, as the page configures it) and the derivations' two runs."""
    import torch

    from specviz.core.sampling import SamplingConfig
    from specviz.engine.decode import DecodeConfig
    from specviz.proposers.eagle import Eagle, EagleHead
    from specviz.proposers.eagle_tree import EagleTree
    from specviz.proposers.vocab import SubsetHead
    from specviz.teach import derivations as D, predict as P, trees

    target, _ = models
    tok = target.tokenizer

    def tiny_heads(method, tgt, *a, **kw):
        torch.manual_seed(0)
        parts = (EagleHead.for_target(tgt.model.config).identity_init(), tgt.model.get_input_embeddings(),
                 SubsetHead(tgt.model.get_output_embeddings().weight, torch.arange(2, 2000)))
        return EagleTree(*parts) if M.REGISTRY[method].tree else Eagle(*parts)
    monkeypatch.setattr(trees, "make_proposer", tiny_heads)
    w = workloads.of_kind(workloads.NOVEL)[0]
    seen = spy(monkeypatch)
    trees.chain_vs_tree(target, "eagle", encode_prompt(tok, w.prompt, w.chat),     # pages/trees.py's config()
                        DecodeConfig(k=3, max_new_tokens=6, sampling=SamplingConfig(0.0), record=True))
    ex = P.tree_plan("eagle", "eagle-tree", 3, 0.0, 6, w.name)
    shown = P.tree_guess("eagle", "eagle-tree", 3, 0.0, 6, w.name).experiment
    assert shown == ex.describe() == observed(seen, ex, tok).describe()
    for ex, run in ((D.plan_series(6), lambda: D.measured_series(target, max_new=6)),
                    (D.plan_server_view("lookup", w.name, 6), lambda: D.run_plan(target, D.plan_server_view(
                        "lookup", w.name, 6)))):
        monkeypatch.undo()
        seen = spy(monkeypatch)
        run()
        assert observed(seen, ex, tok).describe() == ex.describe()


def test_the_lessons_guesses_are_their_runs(monkeypatch, models):
    """Lessons 18 and 19: recycling's guess names the tree size that ran; block verification's names both ways of
    verifying the same method, run once per seed each (read back from the proposers and DecodeConfigs)."""
    from specviz.teach import blockverify as B, recycling as R

    target, drafter = models
    tok = target.tokenizer
    w = workloads.of_kind(workloads.NOVEL)[0]
    seen = spy(monkeypatch)
    ex = R.plan(w.name, 6, nodes=5)
    R.run(target, ex)
    assert R.guess(ex).experiment == ex.describe() == observed(seen, ex, tok).describe()
    assert observed(seen, ex, tok).describe() != R.plan(w.name, 6).describe()       # n = 12 is not what ran
    monkeypatch.undo()
    seen = spy(monkeypatch)
    ex = B.plan("draft", w.name, 2, 6, (1, 2))
    B.run(target, ex, drafter)
    ran = [r[0] for r in seen]
    assert tuple(dict.fromkeys(ran)) == ex.settings and all(ran.count(s) == 2 for s in ex.settings)
    assert [s.verify for s in ex.settings] == ["token", "block"] and B.guess(ex).experiment == ex.describe()
