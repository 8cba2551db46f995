# The two commands a new user needs (README): `make app` and `make test`.
.PHONY: setup app test test-fast
setup:
	bash scripts/setup.sh

app: setup
	.venv/bin/python -m specviz.ui.launch --server.address localhost --server.headless true --browser.gatherUsageStats false

test:
	bash scripts/setup.sh --browser
	.venv/bin/python -m pytest -q tests

test-fast: setup
	.venv/bin/python -m pytest -q tests -m "not slow"
