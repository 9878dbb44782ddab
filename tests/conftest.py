import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("GLOG_v", "3")  # MindSpore's C++ warnings would drown pytest's output

sys.path.insert(0, str(Path(__file__).parent))  # so tests can import the shared nets module


@pytest.fixture(autouse=True)
def _run_in_a_scratch_folder(tmp_path_factory, monkeypatch):
    """Run every test in a folder of its own: what MindSpore writes next to the working folder
    (``rank_0/om/analyze_fail.ir`` after a failed graph compile) never lands in the checkout."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
