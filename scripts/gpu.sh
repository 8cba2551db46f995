#!/usr/bin/env bash
# The GPU checks in one short window: five steps, each capped well inside 10 minutes, about 13 minutes in all.
#
# NEEDS A CUDA BUILD OF TORCH. scripts/setup.sh installs the pinned CPU wheel (torch 2.13.0+cpu), which cannot
# see a GPU. On the GPU machine, after scripts/setup.sh, swap it for the CUDA 12.8 build of the same version:
#     .venv/bin/pip uninstall -y torch && .venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128
# (about 3 GB with its CUDA libraries; it needs an NVIDIA driver for CUDA 12, i.e. `nvidia-smi` shows
# "CUDA Version: 12.x" or higher. If that index has no 2.13.0, https://pytorch.org/get-started/locally/ lists
# the CUDA builds there are.) `scripts/setup.sh` would put the CPU wheel back: do not rerun it afterwards.
#
#   bash scripts/gpu.sh              every step, in order
#   bash scripts/gpu.sh 3 4          only the steps named (a rerun resumes: the corpus and training pick up
#                                    from their checkpoints in $OUT, the other steps start again)
#   DRY=1 bash scripts/gpu.sh        print the plan and the commands, run nothing (works without a GPU)
#   DEVICE=cuda:1 OUT=runs/gpu2 ...  another device or output folder (DEVICE=cpu runs the same steps on the CPU,
#                                    slowly: a check of the script itself, not of the GPU)
#
# Nothing here writes over models/ or bench/: artefacts go to $OUT/models, and the corpus card written in step 4
# names those, not the shipped ones. Compare $OUT/models/*.json with models/*.json before copying anything over.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-runs/gpu}
DRY=${DRY:-}

# per step: the minutes it should take on one H200 (loads included; about 13 in all), the hard cap (`timeout`)
# after which it is stopped and reported while the next step starts, and what it does
EXPECT=(0 2 2 3 5 1)
LIMIT=(0 3 3 4 7 2)
TITLE=("" "greedy equality in float32: every method's tokens against plain decoding's"
       "the quick bench (auto dtype: bfloat16, or float16 on a GPU without native bfloat16)"
       "the corpus at GPU scale: batched generation, batched teacher-forced labels"
       "training on it: EAGLE, the EAGLE-3 head, Medusa, the drafter, LoRA (checkpoints resume), and the corpus card"
       "the shipped heads on the LoRA fine-tuned target, briefly (merging the delta on the GPU)")

run() {                     # print a command, run it unless DRY
  echo "+ $*" >&2
  [ -n "$DRY" ] || "$@"
}

specviz() { run "$PY" -m specviz "$@"; }

step1() {
  mkdir -p "$OUT"
  for m in lookup draft medusa eagle medusa-tree eagle-tree hybrid; do
    specviz generate --workload summarise-passage --method "$m" --k 4 --max-new-tokens 64 \
      --device "$DEVICE" --dtype float32 --against-plain 1 --json > "$OUT/equal-$m.json" || { echo "$m: failed"; continue; }
    [ -n "$DRY" ] && continue
    # a mismatch is reported with its top-2 logit gap (a near-tie is numerics, not a bug) and does not stop the rest
    "$PY" -c "import json,sys; r=json.load(open(sys.argv[1]))['against_plain']; \
print(sys.argv[2] + ':', 'identical to plain' if r['identical'] else r['divergence'])" "$OUT/equal-$m.json" "$m"
  done
}

step2() {
  specviz bench --quick --device "$DEVICE" --out "$OUT/bench-quick"
}

step3() {
  specviz train corpus --device "$DEVICE" --prompts 4096 --batch 512 --max-new-tokens 256 \
    --run "$OUT/corpus" --max-minutes 2
}

step4() {
  local c=(--device "$DEVICE" --corpus "$OUT/corpus" --out "$OUT/models")
  specviz train eagle "${c[@]}" --loss kl --reg 0 --steps 20000 --tokens-per-step 8192 --run "$OUT/eagle" --max-minutes 1.5
  # the same budget for the EAGLE-3 head (layers 2, 15, 29 of 30; their outputs recomputed once from the ids)
  specviz train eagle3 "${c[@]}" --layers 2,15,29 --steps 20000 --tokens-per-step 8192 --run "$OUT/eagle3" \
    --max-minutes 1.5
  specviz train medusa "${c[@]}" --steps 20000 --tokens-per-step 8192 --run "$OUT/medusa" --max-minutes 0.75
  specviz train drafter "${c[@]}" --steps 20000 --tokens-per-step 8192 --run "$OUT/drafter" --max-minutes 0.5
  specviz train lora --device "$DEVICE" --corpus "$OUT/corpus" --out "$OUT/models" --steps 2000 --batch 16 \
    --run "$OUT/lora" --max-minutes 0.5
  specviz train card --corpus "$OUT/corpus" --models "$OUT/models" --out "$OUT/models/corpus.md"
}

step5() {
  specviz train evaluate --part finetuned --device "$DEVICE" --max-new-tokens 32 --only plain,lookup,medusa,eagle \
    --run "$OUT/eval"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(1 2 3 4 5)
if [ -z "$DRY" ] && [[ "$DEVICE" == cuda* ]]; then
  "$PY" -c "import sys, torch; torch.cuda.is_available() or sys.exit('no CUDA device visible to torch ' + \
torch.__version__ + ': install a CUDA build (see the first lines of scripts/gpu.sh)'); print(torch.cuda.get_device_name())" \
    || exit 2
fi
failed=()
for s in "${steps[@]}"; do
  case "$s" in 1|2|3|4|5) ;; *) echo "unknown step '$s' (1-5)" >&2; exit 2 ;; esac
  echo "== $s. ${TITLE[$s]} (about ${EXPECT[$s]} min, stopped at ${LIMIT[$s]})"
  t0=$SECONDS
  if [ -n "$DRY" ]; then
    "step$s"
  else
    export -f run specviz "step$s"
    export PY DEVICE OUT DRY
    timeout --kill-after=10 "$((LIMIT[s] * 60))" bash -c "step$s"
    rc=$?
    [ $rc -eq 0 ] || { failed+=("$s"); echo "step $s: exit $rc$([ $rc -eq 124 ] && echo ' (out of time)')"; }
  fi
  echo "-- step $s took $((SECONDS - t0)) s"
done
[ ${#failed[@]} -eq 0 ] && echo "done: compare $OUT/models/*.json (held-out top-1, sum min(p, q)) with models/*.json" \
  || { echo "steps that failed: ${failed[*]} (rerun them: bash scripts/gpu.sh ${failed[*]})"; exit 1; }
