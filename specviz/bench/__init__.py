"""The benchmark: plan, phases, checks, report (python -m specviz bench), and the classroom load test."""
