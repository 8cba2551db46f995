"""Training the learned proposers for one target checkpoint: corpus, drafter, Medusa, EAGLE, LoRA.

Every job is a seeded script that writes checkpoints under a run folder and resumes from them;
the finished artifacts go to models/ as bfloat16 safetensors with a JSON card (see artifacts.py).
"""
