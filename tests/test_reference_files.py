"""The original's weights read from its files: PyTorch state dicts without torch and without
running their pickle, .safetensors, ONNX initializers; and every unreadable file refused in words.

The PyTorch files in tests/references/pytorch/ and samples/ were written by torch itself
(scripts/references/make_samples.py); the tests need no torch.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import graphaudit
from graphaudit.capture.reference import read_reference
from graphaudit.errors import GraphAuditError

ROOT = Path(__file__).resolve().parent.parent
PYTORCH = ROOT / "tests" / "references" / "pytorch"
CNN_NAMES = ["conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"]


def test_a_state_dict_is_read_in_module_order_with_its_buffers():
    ref = read_reference(PYTORCH / "original.pth")
    assert ref.format == "pytorch" and ref.ordered
    assert list(ref.tensors)[:6] == CNN_NAMES
    assert ref.tensors["bn.num_batches_tracked"].dtype == np.int64
    assert ref.tensors["fc1.weight"].shape == (16, 8) and ref.tensors["fc1.weight"].dtype == np.float32


def test_the_same_weights_from_pth_and_safetensors_agree_bit_for_bit():
    pth = read_reference(PYTORCH / "original.pth").tensors
    st = read_reference(ROOT / "samples" / "GA630" / "original.safetensors")
    assert not st.ordered  # safetensors sorts by dtype and name: the mapping's order pass sorts naturally
    assert set(st.tensors) == set(pth)
    for name, array in pth.items():
        assert np.array_equal(st.tensors[name], array), name


def test_a_tie_is_one_storage_named_twice():
    ref = read_reference(PYTORCH / "tied.pth")
    assert ref.ties == (("embed.weight", "head.weight"),)
    assert np.array_equal(ref.tensors["embed.weight"], ref.tensors["head.weight"])


def test_bfloat16_is_widened_exactly():
    wide = read_reference(PYTORCH / "bf16.pth").tensors["fc1.weight"]
    full = read_reference(PYTORCH / "original.pth").tensors["fc1.weight"]
    assert wide.dtype == np.float32
    assert np.abs(wide - full).max() <= np.abs(full).max() * 2**-8  # bfloat16 keeps 8 bits of mantissa
    assert np.array_equal(wide.view(np.uint32) & 0xFFFF, np.zeros_like(wide.view(np.uint32)))


def test_views_are_read_with_their_offset_and_strides():
    tensors = read_reference(PYTORCH / "strided.pth").tensors
    grid = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(tensors["t"], grid.T)
    assert np.array_equal(tensors["s"], grid[1:, 1:3])


def test_a_checkpoint_dict_gives_its_state_dict():
    ref = read_reference(PYTORCH / "wrapped.pth")
    assert list(ref.tensors)[:6] == CNN_NAMES


def test_a_pickled_module_is_refused_naming_what_it_asks_to_run():
    with pytest.raises(GraphAuditError, match=r"asks to run __main__\.Original.*never runs a pickle's code"):
        read_reference(PYTORCH / "module.pth")


class _WritesAFile:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("payload", ["open", "system"])
def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path, payload):
    victim = tmp_path / "written-by-the-pickle"
    obj = _WritesAFile(str(victim)) if payload == "open" else _Shell(f"touch {victim}")
    evil = tmp_path / "evil.pth"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("evil/data.pkl", pickle.dumps({"weight": obj}, protocol=2))
        archive.writestr("evil/byteorder", "little")
    asked = f"{open.__module__}.open" if payload == "open" else f"{os.system.__module__}.system"
    with pytest.raises(GraphAuditError, match=asked.replace(".", r"\.")):
        read_reference(evil)
    from mindspore import nn

    with pytest.raises(GraphAuditError, match="reference="):
        graphaudit.audit(nn.Dense(2, 2), reference=str(evil))
    assert not victim.exists()


class _Shell:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _safetensors(path: Path, entries: dict[str, tuple[str, list[int], bytes]]) -> Path:
    header, data = {}, b""
    for name, (dtype, shape, raw) in entries.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


def test_safetensors_bfloat16_and_integers(tmp_path):
    values = np.float32([1.5, -2.25, 3.0])
    bf16 = (values.view(np.uint32) >> 16).astype("<u2").tobytes()
    path = _safetensors(
        tmp_path / "m.safetensors",
        {"w": ("BF16", [3], bf16), "ids": ("I64", [1, 2], np.int64([[4, 5]]).tobytes())},
    )
    tensors = read_reference(path).tensors
    assert np.array_equal(tensors["w"], values)
    assert np.array_equal(tensors["ids"], [[4, 5]])


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\x00" * 4, "not a readable .safetensors file"),
        (struct.pack("<Q", 10**9) + b"{}", "not a readable .safetensors file"),
    ],
)
def test_a_broken_safetensors_file_is_refused_in_words(tmp_path, content, words):
    path = tmp_path / "broken.safetensors"
    path.write_bytes(content)
    with pytest.raises(GraphAuditError, match=words):
        read_reference(path)


def test_a_truncated_safetensors_file_is_refused(tmp_path):
    path = _safetensors(tmp_path / "t.safetensors", {"w": ("F32", [4], np.zeros(4, np.float32).tobytes())})
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(GraphAuditError, match="lies past the end of the file"):
        read_reference(path)


def test_a_file_torch_save_did_not_write_is_refused(tmp_path):
    legacy = tmp_path / "old.pth"
    legacy.write_bytes(pickle.dumps({"weight": [1.0]}))
    with pytest.raises(GraphAuditError, match=r"not a zip file as torch\.save writes them"):
        read_reference(legacy)
    with pytest.raises(GraphAuditError, match=r"reads \.safetensors, \.pth"):
        read_reference(_safetensors(tmp_path / "model.weights", {}))


def _onnx_file(path: Path, external: bool = False) -> Path:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(3, 2), "fc.weight")
    folded = numpy_helper.from_array(np.ones((2, 3), np.float32), "onnx::MatMul_7")
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "fc.weight"], ["h"], transB=1),
            helper.make_node("MatMul", ["h", "onnx::MatMul_7"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [weight, folded],
    )
    model = helper.make_model(graph)
    if external:
        onnx.save_model(
            model,
            str(path),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location="weights.bin",
            size_threshold=0,
        )
    else:
        onnx.save_model(model, str(path))
    return path


def test_onnx_initializers_and_the_matmul_operands(tmp_path):
    ref = read_reference(_onnx_file(tmp_path / "m.onnx"))
    assert ref.format == "onnx"
    assert list(ref.tensors) == ["fc.weight", "onnx::MatMul_7"]
    assert ref.matmul_right == {"onnx::MatMul_7"}
    assert np.array_equal(ref.tensors["fc.weight"], np.arange(6).reshape(3, 2))


def test_onnx_external_data_that_is_missing_is_named(tmp_path):
    path = _onnx_file(tmp_path / "m.onnx", external=True)
    assert read_reference(path).tensors["fc.weight"].shape == (3, 2)  # beside it: read
    (tmp_path / "weights.bin").unlink()
    with pytest.raises(GraphAuditError, match=r"external file 'weights\.bin', which is not beside it"):
        read_reference(path)
