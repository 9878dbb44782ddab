"""Write the PyTorch originals that the GA630-GA634 samples and tests/test_reference*.py compare ports with.

Run where torch is installed (never by the tests, which need no torch)::

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 numpy safetensors
    /tmp/torchenv/bin/python scripts/references/make_samples.py

It writes, deterministically (``torch.manual_seed(0)``):

- ``samples/GA630/original.safetensors``: :class:`Original`, a small CNN (conv, BatchNorm,
  two Linear layers), as ``safetensors.torch.save_file`` writes its ``state_dict()``;
- ``samples/GA633/original.pth``: :class:`TiedLM`, a tiny language model whose head is tied
  to its embedding, as ``torch.save(model.state_dict())`` writes it (the tie: one storage);
- ``tests/references/pytorch/``: the restricted unpickler's fixtures: ``tied.pth`` (the same),
  ``bf16.pth`` (bfloat16 tensors), ``strided.pth`` (a transposed and a sliced view),
  ``wrapped.pth`` (``{"epoch": 3, "state_dict": ...}``) and ``module.pth`` (a whole module
  pickled: refused, it names its class).
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save_file

ROOT = Path(__file__).resolve().parents[2]


class Original(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc2(torch.relu(self.fc1(x)))


class TiedLM(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 8)
        self.hidden = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 32, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.hidden(self.embed(ids))))


def ga640() -> None:
    """``samples/GA640/original/``: make_planted's :class:`CNN` dumped by graphaudit.reference on 2 8x8 images."""
    from make_planted import CNN

    from graphaudit.reference import dump

    torch.manual_seed(0)
    model = CNN()
    x = torch.randn(2, 3, 8, 8)
    dump(model, (x,), str(ROOT / "samples/GA640/original"))


def main() -> None:
    ga640()
    torch.manual_seed(0)
    original = Original().eval()
    save_file(original.state_dict(), ROOT / "samples/GA630/original.safetensors")
    torch.manual_seed(0)
    tied = TiedLM().eval()
    torch.save(tied.state_dict(), ROOT / "samples/GA633/original.pth")
    fixtures = ROOT / "tests/references/pytorch"
    fixtures.mkdir(parents=True, exist_ok=True)
    torch.save(tied.state_dict(), fixtures / "tied.pth")
    torch.save(
        {k: v.to(torch.bfloat16) for k, v in original.state_dict().items() if v.is_floating_point()},
        fixtures / "bf16.pth",
    )
    grid = torch.arange(12.0).reshape(3, 4)
    torch.save({"t": grid.t(), "s": grid[1:, 1:3]}, fixtures / "strided.pth")
    torch.save({"epoch": 3, "state_dict": original.state_dict()}, fixtures / "wrapped.pth")
    torch.save(original, fixtures / "module.pth")
    torch.save(original.state_dict(), fixtures / "original.pth")


if __name__ == "__main__":
    main()
