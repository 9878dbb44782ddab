"""The torch-side helper, ``graphaudit.reference``: what it writes is what ``reference=`` reads.

``dump`` itself needs torch and is run by scripts/references/make_*.py (its output is in
tests/references/planted/ and samples/GA640/original/, read by tests/test_reference_outputs.py);
here, without torch: its safetensors writer against graphaudit's reader, its key format, and
that its command line starts without torch or MindSpore.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import twins

from graphaudit.capture.reference import read_reference
from graphaudit.capture.reference.safetensors_file import read_safetensors
from graphaudit.reference import FORMAT, activation_key, parse_activation_key, write_safetensors

PLANTED = Path(__file__).resolve().parent / "references" / "planted"


def test_written_safetensors_read_back_bit_for_bit(tmp_path):
    tensors = {
        "a.weight": np.arange(6, dtype=np.float32).reshape(2, 3),
        "a.bias": np.float16([1.5, -2]),
        "steps": np.int64([7]),
        "mask": np.array([True, False]),
        "empty": np.zeros((0, 4), np.float32),
    }
    write_safetensors(str(tmp_path / "w.safetensors"), tensors)
    back = read_safetensors(str(tmp_path / "w.safetensors"))
    assert list(back) == list(tensors)
    for name, array in tensors.items():
        assert back[name].dtype == array.dtype and np.array_equal(back[name], array), name


@pytest.mark.parametrize("key", [("", 0, "output", 0), ("encoder.layer.11", 3, "input", 2)])
def test_activation_keys_parse_back(key):
    assert parse_activation_key(activation_key(*key)) == key


@pytest.mark.parametrize("original", ["mlp", "cnn", "attention"])
def test_the_committed_dumps_are_read_whole(original):
    manifest = json.loads((PLANTED / original / "manifest.json").read_text())
    assert manifest["graphaudit_reference"] == FORMAT
    reference = read_reference(str(PLANTED / original))
    assert reference.format == "dump" and reference.activations is not None
    calls = reference.activations.calls
    assert calls[-1] == ("", 0) and all(reference.activations.output(p, c) for p, c in calls)


def test_a_folder_that_is_no_dump_is_refused(tmp_path):
    from graphaudit.errors import ArgumentError

    with pytest.raises(
        ArgumentError, match=r"a folder without the manifest\.json graphaudit\.reference\.dump writes"
    ):
        read_reference(str(tmp_path))


def test_the_command_line_starts_without_torch_or_mindspore():
    code = (
        "import sys\nfrom graphaudit.reference import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\nprint('torch' in sys.modules, 'mindspore' in sys.modules)"
    )
    done = twins.run("-c", code)
    assert done.returncode == 0, done.stderr
    assert "MODULE:FACTORY" in done.stdout and done.stdout.strip().splitlines()[-1] == "False False"
