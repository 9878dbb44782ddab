"""graphaudit.connectivity on real networks: where nodes lie, which cells feed which, globs."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from nets import Containers, Repeated, Residual, TwoInputs, tensor

import graphaudit
from graphaudit import graph as g
from graphaudit.graph.connectivity import (
    close_paths,
    connected,
    direct_connections,
    inside,
    location,
    resolve,
)


def children(graph) -> list[str]:
    return [p for p in g.cell_nodes_by_path(graph) if p and "." not in p]


@pytest.fixture(scope="module")
def residual():
    return graphaudit.to_networkx(Residual(), inputs=tensor(1, 3, 8, 8))


# -- inside / location ----------------------------------------------------------------
def test_inside_follows_dotted_prefixes_not_string_prefixes(residual):
    assert inside(residual, "call:down.0#1", "down")
    assert inside(residual, "call:down.0#1", "down.0")
    assert not inside(residual, "call:down#1", "down.0")
    assert not inside(residual, "call:down.0#1", "down.00")
    assert not inside(residual, "call:down.0#1", "dow")  # a string prefix, not a path prefix


def test_root_holds_every_call_and_op_but_no_input_or_output(residual):
    for node, attrs in residual.nodes(data=True):
        if attrs["kind"] in (g.CALL, g.OP):
            assert inside(residual, node, ""), node
        elif attrs["kind"] in (g.INPUT, g.OUTPUT):
            assert not inside(residual, node, "")
            assert location(residual, node) is None


def test_an_op_lies_at_its_scope(residual):
    [add] = [n for n, d in g.nodes_of_kind(residual, g.OP) if d["op_type"] == "add"]
    assert location(residual, add) == ""
    assert not any(inside(residual, add, p) for p in children(residual))


def test_a_cell_outside_the_tree_lies_where_its_caller_lies():
    class Block(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Dense(4, 4)
            self.stray = [nn.Dense(4, 4)]  # a plain list: not registered

        def construct(self, x):
            return self.stray[0](self.fc(x))

    class Net(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.block = Block()
            self.head = nn.Dense(4, 2)

        def construct(self, x):
            return self.head(self.block(x))

    graph = graphaudit.to_networkx(Net(), inputs=tensor(2, 4))
    [stray] = [n for n, d in g.nodes_of_kind(graph, g.CALL) if d["cell"] == ""]
    assert location(graph, stray) == "block"
    assert direct_connections(graph, ["block", "head"]) == {("block", "head")}


# -- direct_connections / connected ------------------------------------------------------
def test_residual_children_connect_through_the_functional_add(residual):
    assert direct_connections(residual, children(residual)) == {
        ("conv", "bn"),
        ("bn", "relu"),
        ("down", "relu"),
    }


def test_a_cell_in_between_breaks_a_connection_but_an_op_does_not(residual):
    assert connected(residual, "down", "relu")  # through the add at the root's scope
    assert connected(residual, "down.1", "relu")
    assert connected(residual, "conv", "bn")
    assert not connected(residual, "conv", "relu")  # bn is in between
    assert not connected(residual, "bn", "conv")  # direction matters


def test_nested_paths_are_never_paired(residual):
    found = direct_connections(residual, ["down", "down.0", "down.1", "relu"])
    assert found == {("down.0", "down.1"), ("down", "relu"), ("down.1", "relu")}
    assert not connected(residual, "down", "down.0")
    assert not connected(residual, "", "relu")


def test_a_listed_cell_stops_the_walk(residual):
    # down.0 -> down.1 -> (add) -> relu: with down.1 listed, down.0 does not reach relu.
    assert direct_connections(residual, ["down.0", "down.1", "relu"]) == {
        ("down.0", "down.1"),
        ("down.1", "relu"),
    }


def test_two_inputs_meet_in_the_head_through_cat():
    graph = graphaudit.to_networkx(TwoInputs(), inputs=(tensor(2, 3), tensor(2, 5)))
    assert direct_connections(graph, ["left", "right", "head"]) == {("left", "head"), ("right", "head")}
    assert not connected(graph, "left", "right")


def test_containers_and_a_cell_reused_under_two_names():
    graph = graphaudit.to_networkx(Containers(), inputs=tensor(2, 4))
    found = direct_connections(graph, ["stem", "blocks.0", "blocks.1", "act", "heads.cls", "heads.box"])
    # ``again`` is the same object as ``act``: its call lies at the first path, ``act``.
    assert found == {
        ("stem", "blocks.0"),
        ("blocks.0", "act"),
        ("act", "blocks.1"),
        ("blocks.1", "act"),
        ("act", "heads.cls"),
        ("act", "heads.box"),
    }
    assert not connected(graph, "stem", "heads.cls")


def test_repeated_calls_of_one_block_stay_inside_it():
    graph = graphaudit.to_networkx(Repeated(), inputs=tensor(2, 4))
    # One Dense object called three times: every call lies at layers.0, so the flow
    # between the calls is internal to it, not a connection between two listed paths.
    assert direct_connections(graph, ["layers.0", "layers.1", "layers.2"]) == set()


def test_a_pass_through_container_is_glue():
    class Gate(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Dense(4, 4)
            self.enabled = False

        def construct(self, x):
            return self.fc(x) if self.enabled else x

    class Net(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.backbone = nn.Dense(4, 4)
            self.gate = Gate()
            self.head = nn.Dense(4, 2)

        def construct(self, x):
            return self.head(self.gate(self.backbone(x)))

    graph = graphaudit.to_networkx(Net(), inputs=tensor(2, 4))
    assert direct_connections(graph, ["backbone", "gate", "head"]) == {("backbone", "gate"), ("gate", "head")}
    assert connected(graph, "backbone", "head")  # gate only passed the tensor on


def test_a_discarded_branch_connects_to_nothing():
    class Net(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.backbone = nn.Dense(4, 4)
            self.aux = nn.Dense(4, 4)
            self.head = nn.Dense(4, 2)

        def construct(self, x):
            x = self.backbone(x)
            self.aux(x)
            return self.head(ops.relu(x))

    graph = graphaudit.to_networkx(Net(), inputs=tensor(2, 4))
    assert direct_connections(graph, children(graph)) == {("backbone", "aux"), ("backbone", "head")}


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_a_sequential_chain_connects_each_cell_to_the_next(depth):
    net = nn.SequentialCell([nn.Dense(4, 4) for _ in range(depth)])
    graph = graphaudit.to_networkx(net, inputs=tensor(1, 4))
    assert direct_connections(graph, children(graph)) == {(str(i), str(i + 1)) for i in range(depth - 1)}


def test_without_a_traced_pass_there_are_no_connections():
    graph = graphaudit.to_networkx(Residual())
    assert direct_connections(graph, children(graph)) == set()
    assert not connected(graph, "conv", "bn")


# -- resolve --------------------------------------------------------------------------
def test_resolve_concrete_paths_and_globs(residual):
    assert resolve(residual, "down") == ["down"]
    assert resolve(residual, "nope") == []
    assert resolve(residual, "down.*") == ["down.0", "down.1"]
    assert resolve(residual, "d*") == ["down", "down.0", "down.1"]  # * crosses dots, as in Spec
    assert resolve(residual, "down.[01]") == ["down.0", "down.1"]
    assert "" not in resolve(residual, "*")
    assert resolve(residual, "") == [""]  # the root, named explicitly


def test_resolve_lists_every_path_of_a_shared_cell():
    graph = graphaudit.to_networkx(Repeated())
    assert resolve(graph, "layers.*") == ["layers.0", "layers.1", "layers.2"]
    assert resolve(graph, "layers.2") == ["layers.2"]


def test_close_paths_suggests_near_misses(residual):
    assert close_paths(residual, "donw")[0] == "down"
    assert close_paths(residual, "zzz") == []


# -- a real third-party network -------------------------------------------------------
@pytest.mark.slow
def test_mindcv_resnet18_children_form_a_chain():
    mindcv = pytest.importorskip("mindcv")
    net = mindcv.create_model("resnet18", pretrained=False)
    x = Tensor(np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32))
    graph = graphaudit.to_networkx(net, inputs=x)
    chain = ["conv1", "bn1", "relu", "max_pool", "layer1", "layer2", "layer3", "layer4", "pool", "classifier"]
    assert children(graph) == chain
    assert direct_connections(graph, chain) == set(zip(chain, chain[1:]))
    # Inside a BasicBlock: the identity skips conv1..bn2 and joins through the add.
    assert connected(graph, "max_pool", "layer1.0.conv1")
    assert connected(graph, "max_pool", "layer1.0")
    assert connected(graph, "layer1.0", "layer1.1")
    assert not connected(graph, "layer1.0", "layer2")
    # layer2's first block downsamples its input on a second path.
    assert connected(graph, "layer1.1", "layer2.0.down_sample")
    blocks = resolve(graph, "layer?.?")
    assert len(blocks) == 8
    assert direct_connections(graph, blocks) == set(zip(blocks, blocks[1:]))
