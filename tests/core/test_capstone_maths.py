"""The capstone's pure parts: the fleet's memory (teach/reality.fit), which options fit, and the scores."""
from specviz.teach import capstone as C
from specviz.teach.reality import GB

TARGET = C.Cost(weights=0.25 * GB, kv=1000.0)                  # 1000 bytes per token
COSTS = {"plain": C.Cost(0, 0), "lookup": C.Cost(0, 0), "draft": C.Cost(0.05 * GB, 100.0)}
CTX = 1000                                                      # 1 MB of target KV per sequence


def test_fleet_memory_counts_the_drafter_once_and_its_cache_by_traffic_share():
    plain = {p.name: C.Choice("plain") for p in C.POOLS}
    b = C.fleet_budget(plain, COSTS, TARGET, CTX, 0.35)
    assert b.sequences_without == b.sequences_with == 100       # (0.35 - 0.25) GB / 1 MB
    chat = {**plain, "open chat": C.Choice("draft", 4)}         # 25 % of the sequences carry 100 B/token more
    b = C.fleet_budget(chat, COSTS, TARGET, CTX, 0.35)
    assert b.sequences_with == int(0.05 * GB // (1e6 + 0.25 * 1e5))   # 48: the weights halve the room
    both = {**chat, "RAG answers": C.Choice("draft", 4)}       # a second pool on the same drafter: weights once
    assert C.fleet_budget(both, COSTS, TARGET, CTX, 0.35).sequences_with == int(0.05 * GB // (1e6 + 0.6 * 1e5))


def test_an_option_that_does_not_fit_cannot_be_the_best():
    opts = [C.Choice("lookup", 24, "match"), C.Choice("draft", 4), C.Choice("plain")]
    fit = C.fitting("open chat", opts, COSTS, TARGET, 60, CTX, 0.35)
    assert fit == {opts[0].label(), opts[2].label()}           # 48 sequences with the drafter < a batch of 60
    rows = [{"label": o.label(), "tokens_per_s": t} for o, t in zip(opts, (30.0, 45.0, 25.0))]
    s = C.score_pool(rows, fit)
    assert s["best"] == opts[0].label() and s["picked_best"] and s["share_of_best"] == 1.0
    assert C.fitting("open chat", opts, COSTS, TARGET, 40, CTX, 0.35) == {o.label() for o in opts}
    s = C.score_pool(rows, {o.label() for o in opts})           # with room for it, the drafter wins
    assert s["best"] == opts[1].label() and not s["picked_best"] and abs(s["share_of_best"] - 30 / 45) < 1e-12


def test_fleet_score_weights_pools_by_traffic_and_is_zero_over_budget():
    scores = {p.name: {"share_of_best": 1.0 if p.name == "RAG answers" else 0.5} for p in C.POOLS}
    assert abs(C.fleet_score(scores, True) - (0.35 + 0.65 * 0.5)) < 1e-12
    assert C.fleet_score(scores, False) == 0.0


def test_references_skip_the_learners_own_option():
    mine = C.Choice("lookup", 7, "match")                       # k ignored by the match rule: the same as the cap
    labels = [o.label() for o in C.options(mine, ["lookup", "draft"])]
    assert len(labels) == len(set(labels)) and labels[0] == mine.label()
    assert "draft k = 4" in labels and not any(x.startswith("eagle") for x in labels)
