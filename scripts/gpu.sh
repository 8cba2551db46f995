#!/usr/bin/env bash
# On a CUDA machine (e.g. the lent GPU): the GPU-relevant checks, the quick bench, and corpus + training
# at GPU scale, in under 10 minutes. Needs the project's environment (scripts/setup.sh) with a CUDA torch.
# Not run in this repository's history yet: no session has been lent a GPU (see models/README.md).
#   bash scripts/gpu.sh            everything (about 9 minutes on one H200)
#   MINUTES=2 bash scripts/gpu.sh  shorter corpus and training budgets
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
MINUTES=${MINUTES:-3}
OUT=${OUT:-runs/gpu}
mkdir -p "$OUT"
$PY -c "import torch; assert torch.cuda.is_available(), 'no CUDA device here'; print(torch.cuda.get_device_name())"

echo "== 1. greedy equality on cuda, float32: every method's output must equal plain decoding's"
for m in lookup draft medusa eagle medusa-tree eagle-tree; do
  $PY -m specviz generate --workload summarise-passage --method "$m" --k 4 --max-new-tokens 64 \
      --device cuda --dtype float32 --against-plain 1 --json > "$OUT/equal-$m.json"
  $PY -c "import json,sys; r=json.load(open('$OUT/equal-$m.json'))['against_plain']; \
print('$m', 'identical' if r['identical'] else r['divergence']); sys.exit(0 if r['identical'] else 1)"
done

echo "== 2. the quick bench on cuda (bfloat16)"
$PY -m specviz bench --quick --device cuda --out "$OUT/bench-quick"

echo "== 3. corpus at GPU scale: batched generation, then batched teacher-forced labels"
$PY -m specviz train corpus --device cuda --prompts 8192 --batch 512 --max-new-tokens 256 \
    --run "$OUT/corpus" --max-minutes "$MINUTES"

echo "== 4. retrain on it (artefacts written to $OUT/models, not over models/: compare before shipping)"
$PY -m specviz train eagle --device cuda --corpus "$OUT/corpus" --loss kl --steps 20000 --tokens-per-step 8192 \
    --run "$OUT/eagle" --out "$OUT/models" --max-minutes "$MINUTES"
$PY -m specviz train medusa --device cuda --corpus "$OUT/corpus" --steps 20000 --tokens-per-step 8192 \
    --run "$OUT/medusa" --out "$OUT/models" --max-minutes "$MINUTES"
$PY -m specviz train card --corpus "$OUT/corpus" --out "$OUT/models/corpus.md"
echo "done: compare $OUT/models/*.json (held-out top-1, Σ min(p, q)) with models/*.json before copying anything over"
