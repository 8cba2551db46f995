"""The benchmark: plan, phases, checks, report (python -m specviz bench)."""
