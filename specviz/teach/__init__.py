"""The logic behind each lesson page: comparisons, sweeps, labs, interview answers, serving export."""
