import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# --dtype auto remembers its timing per machine (engine/autodtype.py): tests keep theirs in a temporary folder,
# never in the user's ~/.cache (subprocesses started by tests inherit it). So does the unpacked default model
# (engine/modelcache.py, 538 MB): written by the run's first load, read by every later one, removed at the end.
os.environ["SPECVIZ_CACHE_DIR"] = tempfile.mkdtemp(prefix="specviz-test-cache-")
atexit.register(shutil.rmtree, os.environ["SPECVIZ_CACHE_DIR"], True)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository (specviz, app.py)
sys.path.insert(0, str(Path(__file__).resolve().parent))      # tests/stats.py

import torch  # noqa: E402

# One intra-op thread for the whole test process: on 2 cores shared with a Streamlit server (the
# browser test) or anything else, two spinning OpenMP threads run many times slower than one.
# No test is timed, and the equality tests compare runs made in this same process.
torch.set_num_threads(1)
