import os
import sys
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")  # MindSpore's C++ warnings would drown pytest's output

sys.path.insert(0, str(Path(__file__).parent))  # so tests can import the shared nets module
