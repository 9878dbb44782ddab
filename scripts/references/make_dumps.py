"""Dump the originals of tests/references/<pair>/ with graphaudit.reference, into <pair>/dump/.

Run where torch is installed, after make_references.py (the same originals, the same batch)::

    PYTHONPATH=. /work/torchenv/bin/python scripts/references/make_dumps.py            # the default pairs
    PYTHONPATH=. /work/torchenv/bin/python scripts/references/make_dumps.py bert t5   # some

Each dump holds the original's weights and every module's inputs and outputs on the pair's
``inputs.npz`` (``python -m graphaudit.reference`` does the same for a user's model); the
tests compare each port with it (GA640) without torch.
"""

from __future__ import annotations

import shutil
import sys

import numpy as np
from make_references import OUT, PAIRS, build_original

from graphaudit.reference import dump

#: The pairs dumped: the transformers ports (a few hundred KB each; a CNN's activations are MBs).
DEFAULT = ["bert", "gpt2", "llama", "t5", "bart", "distilbert", "roberta", "vit", "opt", "gpt_neox"]


def main(names: list[str]) -> None:
    for name in names or DEFAULT:
        pair = PAIRS[name]
        folder = OUT / name
        with np.load(folder / "inputs.npz") as stored:
            batch = {key: stored[key] for key in stored.files}
        model = build_original(pair).float()
        if pair.kind == "vision":
            batch = (batch["pixel_values"],)
        target = folder / "dump"
        shutil.rmtree(target, ignore_errors=True)
        manifest = dump(model, batch, str(target))
        size = sum(p.stat().st_size for p in target.iterdir())
        print(f"{name}: {len(manifest['calls'])} calls, {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
