"""Dump the planted originals with msprobe (MindStudio Probe), as a user of Ascend's tools would.

Run where torch and msprobe are installed (never by the tests, which need neither)::

    pip install mindstudio-probe   # and its dependencies: pandas, matplotlib, tensorboard...
    PYTHONPATH=. /path/to/torchenv/bin/python scripts/references/make_msprobe.py

Each original of ``scripts/references/make_planted.py``, seeded as there (so its weights and
batch are those of ``tests/references/planted/<name>/``), runs once under
``msprobe.pytorch.PrecisionDebugger`` at level ``L0`` (every module's forward), task
``tensor``: msprobe writes ``step0/proc<pid>/dump.json`` and ``dump_tensor_data/*.pt``, copied
as they are into ``tests/references/planted/msprobe/<name>/``. The MLP is also dumped with
task ``statistics`` (``msprobe/mlp_statistics/``: Max/Min/Mean/Norm only, no tensors, so its
state dict is written beside dump.json).
msprobe records each module's parameters but not its buffers: the CNN's BatchNorm running
statistics are in no dump, so its state dict is written beside dump.json
(``original.safetensors``), as a user passes a dump with the original's weights. Two real pairs
(``gpt2``, ``bert``: the transformers originals of ``tests/references/<pair>/``, built and fed
as ``make_references.py`` does, called by keyword) are dumped into ``tests/references/<pair>/msprobe/``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from graphaudit.reference import write_safetensors  # noqa: E402
from scripts.references.make_planted import CNN, MLP, TinyTransformer  # noqa: E402

OUT = ROOT / "tests" / "references" / "planted" / "msprobe"


def run(name: str, model: torch.nn.Module, batch: Any, task: str = "tensor", out: Path = OUT) -> Path:
    """*model* run once on *batch* (a tensor, or a dict of keywords) under msprobe; copied to ``out/name``."""
    from msprobe.pytorch import PrecisionDebugger

    work = Path(tempfile.mkdtemp())
    config = {
        "task": task,
        "dump_path": str(work / "dump"),
        "rank": [],
        "step": [],
        "level": "L0",
        "enable_dataloader": False,
        task: {"scope": [], "list": [], "data_mode": ["all"]},
    }
    (work / "config.json").write_text(json.dumps(config))
    debugger = PrecisionDebugger(config_path=str(work / "config.json"))
    model.eval()
    debugger.start(model=model)
    with torch.no_grad():
        model(**batch) if isinstance(batch, dict) else model(batch)
    debugger.stop()
    debugger.step()
    PrecisionDebugger._instance = None  # one debugger per process otherwise: the next dump is another's
    target = out / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(work / "dump", target)
    shutil.rmtree(work)
    return target


def beside(folder: Path, model: torch.nn.Module) -> None:
    """*model*'s state dict written beside the dump.json in *folder* (buffers included)."""
    (rank,) = folder.glob("step0/*/dump.json")
    state = {k: v.detach().numpy() for k, v in model.state_dict().items() if v.is_floating_point()}
    write_safetensors(str(rank.parent / "original.safetensors"), state)


def main() -> None:
    torch.manual_seed(0)
    run("mlp", MLP(), torch.randn(2, 8))
    torch.manual_seed(0)
    mlp = MLP()
    beside(run("mlp_statistics", mlp, torch.randn(2, 8), task="statistics"), mlp)
    torch.manual_seed(0)
    cnn = CNN()
    beside(run("cnn", cnn, torch.randn(2, 3, 8, 8)), cnn)
    torch.manual_seed(0)
    run("attention", TinyTransformer(), torch.randint(0, 16, (2, 6), dtype=torch.int32))
    for pair in ("gpt2", "bert"):  # real pairs: the original of tests/references/<pair>/, as made there
        from scripts.references.make_references import PAIRS, build_original, make_inputs

        model = build_original(PAIRS[pair])
        batch = {k: torch.from_numpy(v) for k, v in make_inputs(PAIRS[pair]).items()}
        run(
            "msprobe",
            model,
            {**batch, "use_cache": False} if pair == "gpt2" else batch,
            out=ROOT / "tests" / "references" / pair,
        )


if __name__ == "__main__":
    main()
