"""The decode loop, model loading, methods, artefacts, the one measuring path and the measured comparisons."""
