"""GA640 from msprobe's dump of the original: the planted port bugs found as from graphaudit's own dump.

``tests/references/planted/msprobe/<name>/`` are real msprobe dumps (mindstudio-probe 26.2.0,
``PrecisionDebugger``, level L0, task tensor: ``step0/proc<pid>/dump.json`` and
``dump_tensor_data/*.pt``) of the originals of ``tests/references/planted/<name>/``, made by
``scripts/references/make_msprobe.py``; no torch and no msprobe are needed here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from mindspore import Tensor
from reference_ports import MLP, PLANTED, PLANTED_BUGS, PORTS

import graphaudit
from graphaudit.capture.reference import read_reference
from graphaudit.capture.reference.msprobe_dump import find_dump_json
from graphaudit.capture.reference.safetensors_file import read_safetensors

MSPROBE = PLANTED / "msprobe"


def audit(net, original: str, **options) -> graphaudit.Report:
    return graphaudit.audit(net, reference=str(MSPROBE / original), select=["GA63", "GA64"], **options)


@pytest.mark.parametrize("original", sorted(PORTS))
def test_a_faithful_port_computes_what_msprobe_recorded(original):
    report = audit(PORTS[original](), original)
    assert "GA640" in report.checks_run, report.skipped
    assert report.ok and not report.findings, str(report)


@pytest.mark.parametrize("bug", sorted(PLANTED_BUGS))
def test_a_planted_port_bug_is_found_from_the_msprobe_dump(bug):
    port, original, expected = PLANTED_BUGS[bug]
    report = audit(port(bug), original)
    found = [(f.check_id, f.subject) for f in report.findings if f.severity != "info"]
    assert found == [expected], str(report)


def test_the_dumps_weights_and_batch_are_the_originals():
    """The modules' parameters are the state dict; the first module's inputs are the batch."""
    reference = read_reference(str(MSPROBE / "mlp"))
    weights = read_safetensors(str(PLANTED / "mlp" / "weights.safetensors"))
    assert sorted(reference.tensors) == sorted(weights)
    assert all(np.array_equal(reference.tensors[k], weights[k]) for k in weights)
    batch = np.load(PLANTED / "mlp" / "inputs.npz")["0"]
    assert reference.activations is not None
    assert [a.shape for a in reference.activations.inputs] == [batch.shape]
    assert np.array_equal(reference.activations.inputs[0], batch)
    assert reference.activations.calls == [("fc1", 0), ("act", 0), ("mid", 0), ("norm", 0), ("fc2", 0)]


def test_a_batchnorms_running_statistics_come_from_the_state_dict_beside_dump_json():
    reference = read_reference(str(MSPROBE / "cnn"))
    assert {"bn.running_mean", "bn.running_var"} <= set(reference.tensors)


def test_the_batch_given_as_inputs_is_compared():
    batch = Tensor(np.load(PLANTED / "mlp" / "inputs.npz")["0"])
    report = audit(MLP("swapped-activation"), "mlp", inputs=batch)
    assert [(f.check_id, f.subject) for f in report.findings] == [("GA640", "act")]


def test_inputs_holding_nothing_the_first_module_was_given_are_refused():
    with pytest.raises(graphaudit.InputError, match=r"holds nothing the original's first module was given"):
        audit(MLP(), "mlp", inputs=Tensor(np.ones((2, 8), np.float32)))


def test_a_statistics_dump_is_not_compared_and_says_why():
    report = audit(MLP(), "mlp_statistics")
    assert "GA630" in report.checks_run and report.ok, str(report)
    assert 'is an msprobe "statistics" dump' in report.skipped["GA640"]
    assert 'task "tensor"' in report.skipped["GA640"]


def test_dump_json_a_rank_folder_and_the_step_tree_are_the_same_dump(tmp_path):
    (json_path,) = (MSPROBE / "mlp").glob("step0/*/dump.json")
    assert find_dump_json(str(MSPROBE / "mlp")) == str(json_path)
    assert find_dump_json(str(json_path.parent)) == str(json_path)
    assert find_dump_json(str(json_path)) == str(json_path)
    for rank in ("rank0", "rank1"):  # one step of two ranks: rank 0's
        shutil.copytree(json_path.parent, tmp_path / "step0" / rank)
    assert find_dump_json(str(tmp_path)) == str(tmp_path / "step0" / "rank0" / "dump.json")


def test_an_api_level_dump_is_refused_naming_the_level(tmp_path):
    (json_path,) = (MSPROBE / "mlp").glob("step0/*/dump.json")
    dump = json.loads(json_path.read_text())
    dump["level"] = "L1"
    dump["data"] = {"Functional.linear.0.forward": dump["data"]["Module.fc1.Linear.forward.0"]}
    (tmp_path / "dump.json").write_text(json.dumps(dump))
    with pytest.raises(graphaudit.errors.ArgumentError, match=r"records no module calls \(level 'L1'"):
        read_reference(str(tmp_path))


def test_npy_tensors_are_read_as_npy(tmp_path):
    """msprobe's MindSpore dumps write ``.npy``: the same dump, its tensors as .npy, reads alike."""
    (json_path,) = (MSPROBE / "mlp").glob("step0/*/dump.json")
    reference = read_reference(str(json_path.parent))
    text = json_path.read_text().replace('.pt"', '.npy"')
    (tmp_path / "dump_tensor_data").mkdir()
    (tmp_path / "dump.json").write_text(text)
    for (path, call, io), files in reference.activations.files.items():
        for file, array in zip(files, getattr(reference.activations, io)(path, call)):
            np.save(tmp_path / "dump_tensor_data" / Path(file).name.replace(".pt", ".npy"), array)
    for name, array in reference.tensors.items():
        module, _, short = name.rpartition(".")
        cls = {"fc1": "Linear", "mid": "Linear", "fc2": "Linear", "norm": "LayerNorm"}[module]
        np.save(
            tmp_path / "dump_tensor_data" / f"Module.{module}.{cls}.forward.0.parameters.{short}.npy", array
        )
    again = read_reference(str(tmp_path))
    assert all(np.array_equal(again.tensors[k], reference.tensors[k]) for k in reference.tensors)
    assert np.array_equal(again.activations.output("norm", 0)[0], reference.activations.output("norm", 0)[0])


def test_a_tied_weight_is_told_by_its_equal_values_and_a_constant_one_is_not():
    """msprobe saves GPT-2's shared lm_head/wte weight once per module, and no storage to tell them one."""
    reference = read_reference(str(PLANTED.parent / "gpt2" / "msprobe"))
    assert reference.ties == (("transformer.wte.weight", "lm_head.weight"),)
    from graphaudit.capture.reference.msprobe_dump import _equal_values

    ones = {"a.weight": np.ones(4, np.float32), "b.weight": np.ones(4, np.float32)}
    assert _equal_values(ones) == ()


def test_a_dump_json_copied_apart_reads_its_tensors_where_dump_data_dir_says(tmp_path):
    (json_path,) = (MSPROBE / "mlp").glob("step0/*/dump.json")
    dump = json.loads(json_path.read_text())
    dump["dump_data_dir"] = str(json_path.parent / "dump_tensor_data")  # as msprobe writes it: absolute
    (tmp_path / "dump.json").write_text(json.dumps(dump))
    reference = read_reference(str(tmp_path))
    assert sorted(reference.tensors) == sorted(read_reference(str(json_path)).tensors)


def test_assert_matches_reference_needs_the_output_comparison_of_an_msprobe_dump():
    from graphaudit.testing import assert_matches_reference

    (json_path,) = (MSPROBE / "mlp").glob("step0/*/dump.json")
    assert_matches_reference(MLP(), str(json_path))
    with pytest.raises(AssertionError, match=r"GA640"):
        assert_matches_reference(MLP("swapped-activation"), str(json_path))
    (statistics,) = (MSPROBE / "mlp_statistics").glob("step0/*/dump.json")
    with pytest.raises(AssertionError, match=r'is an msprobe "statistics" dump'):
        assert_matches_reference(MLP(), str(statistics))
