"""The ``layout`` the tracer records on index-moving ops, and :func:`regions.carry` replaying it.

Each case runs a real MindSpore operation on tensors whose values are their own element
numbers: replaying the recorded layout on those numbers must give exactly the operation's
output. That is what lets GA401 follow a sigmoid-made part of an output through a
detection loss's reshapes, concat, slices and transposes (issue 41).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import graphaudit
from graphaudit import graph as g
from graphaudit.capture.network.layout import layout_of
from graphaudit.checks._shared import regions


def numbered(*shape: int, start: int = 0) -> Tensor:
    """A tensor holding its own element numbers (from *start*)."""
    return Tensor((np.arange(int(np.prod(shape))) + start).reshape(shape).astype(np.float32))


A, B, C = numbered(2, 3), numbered(2, 4, start=6), numbered(2, 3, 4)

CASES = {
    "concat-axis-1": ("concat", ops.concat, ((A, B), 1), {}),
    "cat-axis-keyword": ("cat", ops.cat, ((A, numbered(3, 3, start=6)),), {"axis": 0}),
    "stack": ("stack", ops.stack, ((A, numbered(2, 3, start=6)), 1), {}),
    "slice-from-the-end": ("getitem", Tensor.__getitem__, (B, (slice(None), slice(-3, None))), {}),
    "ellipsis-new-axis-int": ("getitem", Tensor.__getitem__, (C, (Ellipsis, None, 1)), {}),
    "stepped-slice": ("getitem", Tensor.__getitem__, (C, (0, slice(None, None, 2))), {}),
    "transpose-two-axes": ("transpose", Tensor.transpose, (C, 0, 2, 1), {}),
    "ops-transpose-perm": ("transpose", ops.transpose, (C, (2, 0, 1)), {}),
    "swapaxes": ("swapaxes", Tensor.swapaxes, (C, 0, 2), {}),
    "permute": ("permute", Tensor.permute, (C, 2, 1, 0), {}),
    "view": ("view", Tensor.view, (C, 6, -1), {}),
    "expand-dims": ("expanddims", ops.expand_dims, (A, 1), {}),
    "split-sizes": ("split", ops.split, (B, (1, 3), 1), {}),
    "chunk": ("chunk", ops.chunk, (C, 3, 1), {}),
    "narrow": ("narrow", ops.narrow, (C, 2, 1, 2), {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_recorded_layout_replays_the_operation_exactly(case):
    op_type, fn, args, kwargs = CASES[case]
    output = fn(*args, **kwargs)
    outputs = list(output) if isinstance(output, (tuple, list)) else [output]
    layout = layout_of(op_type, args, kwargs, outputs)
    assert layout is not None
    data = list(args[0]) if isinstance(args[0], (tuple, list)) else [args[0]]
    carried = regions.carry(layout, [t.asnumpy().astype(np.int32) for t in data])
    assert carried is not None
    assert [c.tolist() for c in carried] == [o.asnumpy().astype(np.int32).tolist() for o in outputs]


def test_no_layout_for_what_cannot_be_read():
    index = Tensor(np.array([0, 1], np.int32))
    assert layout_of("getitem", (B, index), {}, [B[index]]) is None  # an index tensor
    assert layout_of("getitem", (B, [0, 1]), {}, [B[[0, 1]]]) is None  # a list: advanced indexing
    assert layout_of("add", (A, A), {}, [A + A]) is None  # not an index-moving operation
    # arguments that do not give the shape that was produced
    assert layout_of("transpose", (C, 0, 1), {}, [C.transpose(0, 2, 1)]) is None


def test_carry_marks_unseen_inputs_unknown_and_refuses_disagreeing_shapes():
    joined = json.dumps({"kind": "concat", "axis": 0, "in": [[1, 2], [1, 2]], "out": [[2, 2]]})
    [out] = regions.carry(joined, [np.array([[3, 3]], np.int32)])
    assert out.tolist() == [[3, 3], [regions.UNKNOWN, regions.UNKNOWN]]
    assert regions.carry(joined, [np.zeros((1, 2), np.int32), np.zeros((5, 2), np.int32)]) is not None
    wrong = json.dumps({"kind": "reshape", "in": [[2, 3]], "out": [[4, 2]]})
    assert regions.carry(wrong, [np.zeros((2, 3), np.int32)]) is None
    assert regions.filled([1 << 12, 1 << 11], 0) is None  # too large to follow element by element


class Head(nn.Cell):
    """A two-branch head, joined, then cut and moved about as a detection loss would."""

    def __init__(self) -> None:
        super().__init__()
        self.box, self.cls = nn.Dense(4, 2), nn.SequentialCell([nn.Dense(4, 3), nn.Sigmoid()])

    def construct(self, x):
        joined = ops.concat((self.box(x), self.cls(x)), 1).view(2, 5, 1)
        boxes, scores = ops.split(joined, (2, 3), 1)
        return boxes.squeeze(-1), scores.squeeze(-1).transpose(1, 0)


def test_the_tracer_records_layouts_and_the_parts_are_followed_through_them():
    from graphaudit.checks._shared.outputs import output_activation, output_parts

    graph = graphaudit.to_networkx(Head(), inputs=numbered(2, 4))
    kinds = {
        attrs["op_type"]: json.loads(attrs["layout"])["kind"]
        for _, attrs in g.nodes_of_kind(graph, g.OP)
        if "layout" in attrs
    }
    assert kinds == {
        "concat": "concat",
        "view": "reshape",
        "split": "split",
        "squeeze": "reshape",
        "transpose": "transpose",
    }
    assert output_parts(graph, "output:0") == [("none", "call:box#1")]
    assert output_parts(graph, "output:1") == [("sigmoid", "call:cls.1#1")]
    assert output_activation(graph, "output:1") == ("sigmoid", "call:cls.1#1")


class WithAConstant(nn.Cell):
    """A sigmoid's output joined with a parameter: a part the tracer sees no maker of."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3, activation="sigmoid")
        self.bias = Parameter(Tensor(np.zeros((2, 1), np.float32)), name="bias")

    def construct(self, x):
        return ops.concat((self.fc(x), self.bias), 1)


def test_a_part_made_where_the_tracer_does_not_see_is_not_known():
    from graphaudit.checks._shared.outputs import output_activation, output_parts

    graph = graphaudit.to_networkx(WithAConstant(), inputs=numbered(2, 4))
    assert output_parts(graph) == [("sigmoid", "call:fc.activation#1"), ("unknown", None)]
    activation, node = output_activation(graph)
    assert activation == "unknown" and graph.nodes[node]["op_type"] == "concat"  # not "a sigmoid" as a whole
