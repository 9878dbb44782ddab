"""One seeding for every test and every sample audit: results that do not depend on test order.

Seed-dependent flakes were fixed one test at a time before; now every test starts from the same
random state (tests/conftest.py), and so does every shared sample audit (tests/sample_audits.py),
whichever test happens to run it first in a worker.
"""

from __future__ import annotations

import random

SEED = 0


def seed_everything(seed: int = SEED) -> None:
    """Seed MindSpore (its global seed, which also seeds the dataset pipelines), NumPy and ``random``."""
    import mindspore as ms
    import numpy as np

    ms.set_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
