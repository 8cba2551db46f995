# The two commands a new user needs (README): `make app` and `make test`.
.PHONY: setup app test test-fast classroom lecture
setup:
	bash scripts/setup.sh

# No file watcher (the tree holds .venv); no Deploy button. Same settings as .streamlit/config.toml.
app: setup
	.venv/bin/python -m specviz.ui.launch --server.address localhost --server.headless true --browser.gatherUsageStats false \
		--server.fileWatcherType none --client.toolbarMode minimal

# ruff first (lint + import order, configured in pyproject.toml): a lint error fails `make test` before pytest runs.
test:
	bash scripts/setup.sh --browser
	.venv/bin/ruff check .
	.venv/bin/python -m pytest -q tests

test-fast: setup
	.venv/bin/python -m pytest -q tests -m "not slow"

# Lecture mode: the app on a folder of recordings (downloaded from Step through / Compare, or written by
# `specviz generate --record FILE`), with no model loaded. RECORDINGS=folder (default: recordings/).
RECORDINGS ?= recordings
lecture: setup
	SPECVIZ_LECTURE=$(RECORDINGS) .venv/bin/python -m specviz.ui.launch --server.address localhost --server.headless true \
		--browser.gatherUsageStats false --server.fileWatcherType none --client.toolbarMode minimal

# The load test at classroom size (docs/classroom.md): SESSIONS browser sessions press Play together.
# RUN_CACHE=on: the server-wide run cache on; DEFAULTS=1: every session plays Step through's defaults.
SESSIONS ?= 20
RUN_CACHE ?= off
classroom:
	bash scripts/setup.sh --browser
	.venv/bin/python -m specviz.harness.loadtest --sessions $(SESSIONS) --run-cache $(RUN_CACHE) $(if $(DEFAULTS),--defaults)
