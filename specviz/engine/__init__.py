"""The decode loop, model loading, methods, artefacts and the one measuring path."""
