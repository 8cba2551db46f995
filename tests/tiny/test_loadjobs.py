"""ui/loadjobs: a model handed to the pages carries its fingerprint already (the run cache's key and every recording
need it; computing it inside the first Play on a fresh server made that Play start ~1.4 s late)."""
from specviz.engine.models import fingerprint
from specviz.ui import loadjobs


def test_the_load_job_hands_over_a_model_whose_fingerprint_is_already_computed():
    key = ("tiny:7", "cpu", "float32")
    try:
        job = loadjobs.job(key)
        assert job["done"].wait(120) and job["error"] is None
        m = job["result"]
        assert m._fingerprint is not None                  # computed in the load job, before any page asked
        assert m._fingerprint == fingerprint(m.model)      # and it is these weights' hash
    finally:
        loadjobs._JOBS.pop(key, None)
