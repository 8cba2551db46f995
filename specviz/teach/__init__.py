"""The logic behind each lesson page: labs, demos, interview answers, serving export (the comparisons and
sweeps they run are specviz.engine.comparisons and .sweeps)."""
