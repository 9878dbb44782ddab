"""The MindSpore ports of ``tests/references/<pair>/``, built from each pair's ``manifest.json``.

Each pair there is a real PyTorch original (its weights, the batch it ran on, every module's
output: ``scripts/references/make_references.py``) and the manifest says how to build its
port at the same config: a ``mindone.transformers`` class from a ``transformers`` config, or
a mindcv model by name. Random initialisation, nothing downloaded, no torch. mindone's ports
are built under :func:`zoo.causal_lms.cpu_initialisers` and must run under
:func:`zoo.shims.for_mindone`. Every import of mindone, mindcv and transformers is inside a
function.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

FOLDER = Path(__file__).resolve().parent.parent / "references"


def pairs() -> list[str]:
    """The pairs present: folders of ``tests/references`` with a manifest."""
    return sorted(p.parent.name for p in FOLDER.glob("*/manifest.json"))


def manifest(pair: str) -> dict[str, Any]:
    return json.loads((FOLDER / pair / "manifest.json").read_text())


def reference_file(pair: str, kind: str = "weights") -> Path:
    """The original's weights file (``kind="weights"``) or its ONNX export (``"onnx"``)."""
    return FOLDER / pair / (manifest(pair)["weights"] if kind == "weights" else "model.onnx")


def build(pair: str) -> Any:
    """The port of *pair*, at the original's config, in inference mode."""
    import mindspore as ms

    port = manifest(pair)["port"]
    ms.set_seed(0)
    if port["package"] == "mindcv":
        import mindcv

        model = mindcv.create_model(port["model"], pretrained=False, **port["kwargs"])
    else:
        import mindone.transformers as mindone_transformers
        import transformers
        from mindspore import Parameter, Tensor, mint

        from zoo.causal_lms import cpu_initialisers
        from zoo.shims import Patches

        rng = np.random.default_rng(0)

        def randn(*size: Any, dtype: Any = None, **_: Any) -> Tensor:  # ViT's cls_token; no CPU kernel
            shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
            return Tensor(rng.standard_normal(shape).astype(np.float32), dtype)

        config_class = getattr(transformers, port["config_class"].rpartition(".")[2])
        config = config_class(**port["config"])
        config._attn_implementation = port["attn_implementation"]

        def on_data(init: Any) -> Any:
            def write(tensor: Any, *args: Any, **kwargs: Any) -> None:
                if isinstance(tensor, Parameter):
                    return init(tensor, *args, **kwargs)
                holder = Parameter(tensor.copy(), name="scratch")
                init(holder, *args, **kwargs)
                tensor.assign_value(holder.value())
                return None

            return write

        cls = getattr(mindone_transformers, port["class"])
        module = sys.modules[cls.__module__]
        patches = Patches()
        patches.set(mint, "randn", randn)
        for name in ("zeros_", "ones_"):  # ViT's init calls zeros_(bias.data): a Tensor in MindSpore 2.10
            if hasattr(module, name):
                patches.set(module, name, on_data(getattr(module, name)))
        try:
            with cpu_initialisers():
                model = cls(config)
        finally:
            patches.restore()
        _cpu_convolutions(model)
    model.set_train(False)
    return model


def _cpu_convolutions(model: Any) -> None:
    """``mint.nn.Conv2d`` cells (ViT's patch embedding) computed by ``ops.conv2d``.

    MindSpore 2.10 has no CPU kernel for the ``Conv2DExt`` that ``mint.nn.Conv2d`` calls; the
    cell keeps the operator as an attribute (``self.conv2d``), replaced here on each such cell
    by the same convolution written with the ``ops`` kernel. Weights and names are the cell's.
    """
    from mindspore import mint, ops

    def conv2d(
        input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: Any
    ) -> Any:
        if isinstance(padding, str):
            out = ops.conv2d(input, weight, None, stride, padding, 0, dilation, groups)
        else:
            pads = (padding, padding) if isinstance(padding, int) else tuple(padding)
            out = ops.conv2d(input, weight, None, stride, "pad", pads, dilation, groups)
        return out if bias is None else out + bias.reshape(1, -1, 1, 1)

    for _, cell in model.cells_and_names():
        if isinstance(cell, mint.nn.Conv2d) and cell.padding_mode == "zeros":
            cell.conv2d = conv2d


def inputs(pair: str, model: Any) -> tuple[Any, ...]:
    """The batch the original ran on, as *model*'s ``construct`` takes it: by position, ids as int32."""
    from mindspore import Tensor

    with np.load(FOLDER / pair / "inputs.npz") as saved:
        batch = {k: saved[k] for k in saved.files}
    if manifest(pair)["port"]["package"] == "mindcv":
        return (Tensor(batch["pixel_values"]),)
    keys = [k for k in inspect.signature(model.construct).parameters if k not in ("self", "kwargs")]
    n = max(keys.index(k) for k in batch) + 1
    return tuple(
        Tensor(batch[k].astype(np.int32) if batch[k].dtype.kind == "i" else batch[k]) if k in batch else None
        for k in keys[:n]
    )


def outputs(pair: str) -> dict[str, np.ndarray]:
    """The original's module outputs on that batch, by module path (``""``: the model's output)."""
    with np.load(FOLDER / pair / "outputs.npz") as saved:
        return {k: saved[k] for k in saved.files}
