"""The pure parts: no model, no transformers. Tested in milliseconds."""
