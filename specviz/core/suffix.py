"""Suffix matching with counts: what followed the context's tail, how often, and where. Pure Python, no model.

SuffixDecoding (Oliaro et al., arXiv 2411.04975; its code is ArcticInference's suffix_tree.cc, which
vLLM's `suffix` method runs) keeps a suffix tree of bounded depth D whose node for a string s counts
the occurrences of s. To draft, it matches the context's last m tokens (m = 1, 2, ... while they occur),
reads the subtree under that node — every continuation of s, with counts — and keeps the candidate
tree with the best score over m.

specviz keeps the same counts without building the tree. Each sequence has an occurrence index
(token -> positions). For the context's last token, every earlier position p holding it is extended
backwards: l_p = how many tokens before and including p agree with the context's tail (at most D).
The occurrences of the tail's last m tokens are then exactly {p : l_p >= m}, and the subtree under
that node is the trie of the tokens that followed those p. These are the suffix tree's counts for every
string of length <= D (tests/core/test_suffix.py checks them against a brute-force trie). Why not the
tree itself: committing a token costs one list append here, against O(D) node updates in a depth-D
trie (Python objects per node); memory is two integers per cached token; evicting a request is dropping
its sequence. The cost moves to drafting: one backward comparison per occurrence of the last token,
bounded by the cache's size (a setting), and timed as every proposer's drafting is.

Drafting follows SuffixDecoding's rules (suffix_tree.cc `speculate` and `_speculate_tree`):
  - a match of m tokens may draft at most floor(factor * m) tokens in all (`max_spec_factor`: suffix_tree.cc
    passes min(max_spec_tokens, match_len * max_spec_factor + offset) to `_speculate_tree` as its node
    budget), and the match plus the draft stay within D (`max_tree_depth`: "limits the sum of the prefix
    match and speculation lengths", vllm/config/speculative.py);
  - each continuation's probability is the product, along its path, of count(child) / count(parent);
    specviz's count(parent) counts the occurrences that continue past it (ArcticInference divides by
    all of them, so text that ends there lowers it); children under `min_token_prob` are pruned;
  - nodes are taken best first (highest probability) up to the token budget, so a parent always comes
    before its children and siblings are tried most likely first;
  - the draft's score is the sum of its nodes' probabilities (the expected number kept, if the
    counts were the truth); over all match lengths the best score wins, ties to the longer match.
Which text each node came from is kept (this prompt, this output, an earlier request), for Step through.
"""
from __future__ import annotations

import heapq
import sys
from collections import Counter, deque
from dataclasses import dataclass, field

from specviz.core.errors import InputError

# vLLM's defaults for its `suffix` method (vllm/config/speculative.py, read for this module):
MAX_TREE_DEPTH = 24          # suffix_decoding_max_tree_depth
MAX_SPEC_FACTOR = 1.0        # suffix_decoding_max_spec_factor
MIN_TOKEN_PROB = 0.1         # suffix_decoding_min_token_prob
VLLM_MAX_CACHED_REQUESTS = 10000  # suffix_decoding_max_cached_requests (specviz's default is smaller: CACHE_REQUESTS)
# specviz's default factor for its suffix proposer: a tree of up to 8 x the match's tokens. Replayed on the model's
# own bfloat16 texts with the bench's v_tree (scripts/copy_bound.py --suffix-factor 4 --suffix-factor 12, 128
# tokens), 8 x drafted better than lookup on each copy-heavy workload (lowest ratio 1.04; 4 x 0.97, 12 x 1.06) with
# the best median there (2.81 against 2.66 and 2.78); on the sessions (--sessions, 64 tokens per request) the three
# were within 5% (medians 2.20, 2.18, 2.28). A verify pass over 24 tokens costs ~1.5 plain steps here, so a long
# draft on a long match is cheap. vLLM's default factor is 1.0.
SUFFIX_FACTOR = 8.0
# specviz's session cache: the earlier requests kept, and a bound on their tokens (oldest evicted first)
CACHE_REQUESTS = 16
CACHE_TOKENS = 16384


class TokenSeq:
    """One token sequence with its occurrence index. `prompt_len` tokens of prompt, then output."""

    def __init__(self, tokens=(), name: str = "this", prompt_len: int | None = None):
        self.tokens: list[int] = []
        self.where: dict[int, list[int]] = {}          # token -> its positions, ascending
        self.name = name
        self.extend(tokens)
        self.prompt_len = len(self.tokens) if prompt_len is None else prompt_len

    def __len__(self) -> int:
        return len(self.tokens)

    def extend(self, tokens) -> None:
        for t in tokens:
            self.where.setdefault(int(t), []).append(len(self.tokens))
            self.tokens.append(int(t))

    def nbytes(self) -> int:
        """Python memory held (lists, dict, ints): for the cache's size per 1K tokens."""
        n = sys.getsizeof(self.tokens) + sys.getsizeof(self.where)
        n += sum(sys.getsizeof(v) for v in self.where.values())
        return n + sum(sys.getsizeof(t) for t in self.where)  # positions and tokens share small-int objects


def match_lengths(seq: TokenSeq, tail: list[int], max_len: int, end: int | None = None) -> list[tuple[int, int]]:
    """(p, l) for every position p < end - 1 of `seq` holding tail[-1]: l = the number of tokens ending at
    p that agree with the end of `tail`, at most max_len. Only positions with a next token (p + 1 < end)
    count: they are the occurrences something followed."""
    if not tail:
        return []
    end = len(seq) if end is None else end
    toks, last = seq.tokens, tail[-1]
    n = min(max_len, len(tail))
    out = []
    for p in seq.where.get(last, ()):
        if p + 1 >= end:
            break
        length = 1
        while length < n and length <= p and toks[p - length] == tail[-1 - length]:
            length += 1
        out.append((p, length))
    return out


@dataclass
class SuffixDraft:
    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)    # -1 = the root (the last committed token)
    probs: list[float] = field(default_factory=list)    # estimated from counts, product along the path
    seen_in: list[str] = field(default_factory=list)    # where each node's token was seen, most often first
    match_len: int = 0
    score: float = 0.0                                  # sum of probs


class _Node:
    __slots__ = ("count", "children", "seen")

    def __init__(self):
        self.count = 0
        self.children: dict[int, _Node] = {}
        self.seen: Counter = Counter()                 # (seq, in its prompt?) -> occurrences through this node


def continuation_trie(occurrences: list[tuple[TokenSeq, int]], depth: int) -> _Node:
    """The trie of the (up to) `depth` tokens that followed each occurrence (seq, p), with counts."""
    root = _Node()
    for seq, p in occurrences:
        node = root
        for q in range(p + 1, min(p + 1 + depth, len(seq))):
            t = seq.tokens[q]
            child = node.children.get(t)
            if child is None:
                child = node.children[t] = _Node()
            child.count += 1
            child.seen[seq, q < seq.prompt_len] += 1
            node = child
    root.count = len(occurrences)
    return root


def best_first(root: _Node, max_tokens: int, min_prob: float) -> SuffixDraft:
    """Take the most probable nodes first, up to max_tokens; children under min_prob are pruned."""
    d = SuffixDraft()
    heap, tie = [], 0                        # (-prob, tie, node, parent index); tie keeps the order stable
    def push(node, prob, parent):
        nonlocal tie
        total = sum(c.count for c in node.children.values())       # the occurrences that went on
        for tok, child in sorted(node.children.items(), key=lambda kv: -kv[1].count):
            pr = prob * child.count / total
            if pr >= min_prob:
                heapq.heappush(heap, (-pr, tie, tok, child, parent))
                tie += 1
    push(root, 1.0, -1)
    while heap and len(d.tokens) < max_tokens:
        neg, _, tok, node, parent = heapq.heappop(heap)
        d.tokens.append(tok), d.parents.append(parent), d.probs.append(-neg)
        d.seen_in.append(", ".join(f"{seq.name} {'prompt' if in_prompt else 'output'}"
                                   for (seq, in_prompt), _ in node.seen.most_common()))
        d.score += -neg
        push(node, -neg, len(d.tokens) - 1)
    return d


def speculate(sources: list[TokenSeq], tail: list[int], max_tokens: int, max_depth: int = MAX_TREE_DEPTH,
              factor: float = MAX_SPEC_FACTOR, min_prob: float = MIN_TOKEN_PROB, min_match: int = 1,
              ends: list[int | None] | None = None) -> SuffixDraft:
    """The best draft tree over all match lengths m >= min_match of `tail` against `sources`.
    ends[i]: count only occurrences before this index of sources[i] (default: the whole sequence)."""
    tail = list(tail[-max_depth:])
    occ = []                                                       # (seq, p, l)
    for i, seq in enumerate(sources):
        end = ends[i] if ends else None
        occ += [(seq, p, length) for p, length in match_lengths(seq, tail, max_depth, end)]
    best = SuffixDraft()
    if not occ or max_tokens < 1:
        return best
    for m in range(max(1, min_match), max(length for _, _, length in occ) + 1):
        budget = min(max_tokens, int(m * factor + 1e-6))            # nodes in all (max_spec_factor)
        depth = min(budget, max_depth - m)                            # match + draft within max_depth
        if depth < 1:
            continue
        group = [(seq, p) for seq, p, length in occ if length >= m]
        d = best_first(continuation_trie(group, depth), budget, min_prob)
        if d.tokens and d.score >= best.score:
            d.match_len, best = m, d
    return best


class SessionCache:
    """Earlier requests of one session, oldest evicted first: at most `max_requests` of them and
    `max_tokens` tokens in all (a request longer than that keeps its last max_tokens tokens)."""

    def __init__(self, max_requests: int = CACHE_REQUESTS, max_tokens: int = CACHE_TOKENS):
        if max_requests < 0 or max_tokens < 0:
            raise InputError(f"the suffix cache's size must be >= 0 (requests {max_requests}, tokens {max_tokens})")
        self.max_requests, self.max_tokens = max_requests, max_tokens
        self.seqs: deque[TokenSeq] = deque()
        self.added = 0                                              # requests ever added (names them)

    def __len__(self) -> int:
        return len(self.seqs)

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.seqs)

    def add(self, tokens: list[int], prompt_len: int = 0) -> None:
        """Remember one finished request's tokens (prompt_len of them its prompt, the rest its output)."""
        self.added += 1
        if self.max_requests == 0 or self.max_tokens == 0 or not tokens:
            return
        cut = max(0, len(tokens) - self.max_tokens)
        self.seqs.append(TokenSeq(tokens[cut:], f"request {self.added}", max(0, prompt_len - cut)))
        while len(self.seqs) > self.max_requests or self.n_tokens > self.max_tokens:
            self.seqs.popleft()

    def clear(self) -> None:
        self.seqs.clear()

    def nbytes(self) -> int:
        return sum(s.nbytes() for s in self.seqs)
