"""Load each original's weights into its port through graphaudit's mapping, run both, compare outputs.

A scratch measure for ``tests/references/<pair>/`` (``make_references.py``), not a feature:
it says whether a pair's files are good for comparing activations -- the mapping pairs each
weight with the right parameter, and the port computes what the original did. MindSpore only::

    PYTHONPATH=. .venv/bin/python scripts/references/compare_outputs.py [pair ...]

For each pair: the port is built at the original's config (``tests/zoo/ports.py``), every
mapped weight is written into its parameter (``Parameter.set_data``; transposed when the
mapping says so, reshaped where MindSpore keeps ``(n,)`` for ``(n, 1)``), the port runs the
batch of ``inputs.npz`` and its output is compared with the original's (``outputs.npz``,
key ``""``): cosine similarity and the largest absolute error. Also per module, for module
paths that the port's cells share with the original (mindone keeps transformers' names).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


def load(model: Any, pair: str) -> tuple[int, list[str]]:
    """The original's weights written into *model* through the mapping: how many, and the findings."""
    from mindspore import Tensor
    from zoo import ports

    import graphaudit
    from graphaudit.capture.reference import read_reference
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.reference import ReferenceWeights

    path = ports.reference_file(pair)
    request = AuditRequest(model, inputs=ports.inputs(pair, model), options={"reference": str(path)})
    weights = EvidenceSet(request).need(ReferenceWeights)
    tensors = read_reference(path).tensors
    params = {  # by attribute path, as the mapping names them (a Parameter's .name may differ)
        f"{path}.{attr}" if path else attr: param
        for path, cell in model.cells_and_names()
        for attr, param in cell._params.items()
        if param is not None
    }
    for entry in weights.mapping.pairs:
        array = tensors[entry.reference]
        parameter = params[entry.port]
        if entry.layout == "transposed":
            array = array.T
        array = array.astype(np.float32).reshape(parameter.shape)
        parameter.set_data(Tensor(array, parameter.dtype))
    checks = ["GA630", "GA631", "GA632", "GA633", "GA634"]
    report = graphaudit.audit(model, inputs=ports.inputs(pair, model), reference=str(path), select=checks)
    return len(weights.mapping.pairs), [f"{f.check_id} {f.subject}" for f in report.findings]


def first_tensor(value: Any) -> Any:
    from mindspore import Tensor

    if isinstance(value, Tensor):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        for item in value:
            found = first_tensor(item)
            if found is not None:
                return found
    return None


def compare(pair: str) -> dict[str, Any]:
    from zoo import ports

    model = ports.build(pair)
    loaded, findings = load(model, pair)
    recorded: dict[str, np.ndarray] = {}
    cells = dict(model.cells_and_names())
    expected = ports.outputs(pair)
    handles = []
    mindone = ports.manifest(pair)["port"]["package"] == "mindone"  # mindcv's cells are not torch's modules
    for path, cell in cells.items():
        if mindone and path and path in expected:

            def keep(cell: Any, args: Any, output: Any, path: str = path) -> None:
                tensor = first_tensor(output)
                if path not in recorded and tensor is not None:
                    recorded[path] = tensor.asnumpy().astype(np.float32)

            handles.append(cell.register_forward_hook(keep))
    out = first_tensor(model(*ports.inputs(pair, model))).asnumpy().astype(np.float32)
    for handle in handles:
        handle.remove()
    worst = ("", 0.0)
    for path, got in recorded.items():
        if got.shape == expected[path].shape:
            err = float(np.abs(got - expected[path]).max())
            worst = max(worst, (path, err), key=lambda w: w[1])
    ref = expected[""]
    a, b = out.reshape(-1).astype(np.float64), ref.reshape(-1).astype(np.float64)
    return {
        "pair": pair,
        "loaded": loaded,
        "findings": findings,
        "shape": (out.shape, ref.shape),
        "cosine": float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))) if a.shape == b.shape else None,
        "max_abs": float(np.abs(out - ref).max()) if out.shape == ref.shape else None,
        "ref_scale": float(np.abs(ref).max()),
        "modules_compared": len(recorded),
        "worst_module": worst,
    }


def main(names: list[str]) -> None:
    from zoo import ports, shims

    with shims.for_mindone():
        for pair in names or ports.pairs():
            try:
                print(compare(pair), flush=True)
            except Exception as err:  # one pair failing says so and the others still run
                print({"pair": pair, "error": f"{type(err).__name__}: {str(err)[:300]}"}, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
