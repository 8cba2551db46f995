"""specviz: real speculative decoding on a real small language model, recorded step by step."""
