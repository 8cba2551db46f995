"""specviz: real speculative decoding on a real small language model, recorded step by step."""
from specviz import runtime as _runtime  # noqa: F401 - first: the thread settings (runtime.py)
