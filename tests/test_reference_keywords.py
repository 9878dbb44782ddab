"""A dump of an original called by keyword (``input_ids=``, ``attention_mask=``), compared by name.

``tests/references/planted/keywords/`` (``scripts/references/make_planted.py``) holds the dump of
a small PyTorch model called as transformers models are, by keyword; its second parameter is
``token_type_ids``. Passed by position, the dumped ``attention_mask`` would be taken for the
port's token types: every output would differ and GA640 would blame a faithful port.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import graphaudit
from graphaudit.capture.reference import read_reference

DUMP = Path(__file__).resolve().parent / "references" / "planted" / "keywords"


class Port(nn.Cell):
    """The faithful port; *mask_name* renames its mask argument, *order* puts it before the types."""

    def __init__(self, bug: str = "") -> None:
        super().__init__()
        self.bug = bug
        self.embed = nn.Embedding(16, 8)
        self.types = nn.Embedding(2, 8)
        self.norm = nn.LayerNorm((8,), epsilon=1e-5)
        self.head = nn.Dense(8, 4)

    def forward(self, input_ids, token_type_ids, attention_mask):
        x = self.embed(input_ids)
        if token_type_ids is not None:
            x = x + self.types(token_type_ids)
        x = self.norm(x)
        if attention_mask is not None and self.bug != "mask-ignored":
            x = x * ops.expand_dims(attention_mask, -1).astype(x.dtype)
        return self.head(x)

    def construct(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.forward(input_ids, token_type_ids, attention_mask)


class MaskFirst(Port):
    def construct(self, input_ids, attention_mask=None, token_type_ids=None):
        return self.forward(input_ids, token_type_ids, attention_mask)


class NoMask(Port):
    def construct(self, input_ids, token_type_ids=None):
        return self.forward(input_ids, token_type_ids, None)


class NeedsPositions(Port):
    def construct(self, input_ids, position_ids, attention_mask=None):
        return self.forward(input_ids, None, attention_mask)


def audit(net: nn.Cell, **options) -> graphaudit.Report:
    return graphaudit.audit(net, reference=str(DUMP), select=["GA63", "GA64"], **options)


def test_the_dump_keeps_the_batchs_names_in_the_calls_order():
    activations = read_reference(str(DUMP)).activations
    assert activations is not None and activations.names == ["input_ids", "attention_mask"]
    assert [a.shape for a in activations.inputs] == [(2, 5), (2, 5)]


@pytest.mark.parametrize("port", [Port, MaskFirst], ids=["types-second", "mask-second"])
def test_a_faithful_port_is_given_the_batch_by_name_whatever_its_order(port):
    report = audit(port())
    assert "GA640" in report.checks_run, report.skipped
    assert report.ok and not report.findings, str(report)


def test_a_port_that_ignores_the_mask_is_found():
    report = audit(Port("mask-ignored"))
    assert [(f.check_id, f.subject) for f in report.findings] == [("GA640", "(root)")], str(report)


def test_inputs_given_by_position_are_checked_by_name():
    with np.load(DUMP / "inputs.npz") as batch:
        ids, mask = Tensor(batch["input_ids"]), Tensor(batch["attention_mask"])
    assert audit(Port(), inputs=(ids, None, mask)).ok
    with pytest.raises(
        graphaudit.InputError, match=r"gives 'token_type_ids', which the original was not given"
    ):
        audit(Port(), inputs=(ids, mask))  # the mask in the token types' place
    with pytest.raises(graphaudit.InputError, match=r"gives no 'attention_mask'"):
        audit(Port(), inputs=(ids,))


def test_a_name_the_port_does_not_take_is_refused_naming_it():
    with pytest.raises(graphaudit.InputError, match=r"run with 'attention_mask' \(by keyword.*does not take"):
        audit(NoMask())


def test_an_argument_the_port_needs_and_the_batch_lacks_is_refused_naming_it():
    with pytest.raises(
        graphaudit.InputError, match=r"needs 'position_ids', which the original was not given"
    ):
        audit(NeedsPositions())
