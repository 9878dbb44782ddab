"""to_networkx on hand-written networks: structure, data flow, serialisation."""

from __future__ import annotations

import json

import mindspore as ms
import networkx as nx
import pytest
from mindspore import Tensor, nn, ops
from nets import Containers, Repeated, Residual, Tied, TwoInputs, tensor

import graphaudit
from graphaudit import graph as g


def kinds(graph: nx.MultiDiGraph) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, attrs in graph.nodes(data=True):
        counts[attrs["kind"]] = counts.get(attrs["kind"], 0) + 1
    return counts


def flows(graph: nx.MultiDiGraph) -> set[tuple[str, str]]:
    return {(s, t) for s, t, _ in g.edges_of_kind(graph, g.FLOWS)}


def test_every_node_and_edge_has_a_kind_from_the_vocabulary():
    graph = graphaudit.to_networkx(TwoInputs(), inputs=(tensor(2, 3), tensor(2, 5)))
    assert {d["kind"] for _, d in graph.nodes(data=True)} <= g.NODE_KINDS
    assert {d["kind"] for _, _, d in graph.edges(data=True)} <= g.EDGE_KINDS
    assert {d["kind"] for _, d in graph.nodes(data=True)} == g.NODE_KINDS - {g.CELL} | {g.CELL}


def test_structure_has_one_node_per_cell_and_parameter_object():
    net = Containers()
    graph = graphaudit.to_networkx(net)
    assert kinds(graph) == {
        "cell": len(list(net.cells_and_names())),
        "parameter": len(list(net.get_parameters())),
    }
    # the Tanh reachable as `act` and as `again` is one node that lists both paths
    assert g.node_paths(graph, "cell:act") == ["act", "again"]
    contains = {(s, t, d["name"]) for s, t, d in g.edges_of_kind(graph, g.CONTAINS)}
    assert ("cell:", "cell:act", "act") in contains and ("cell:", "cell:act", "again") in contains
    assert ("cell:heads", "cell:heads.cls", "cls") in contains
    assert ("cell:blocks", "cell:blocks.1", "1") in contains
    weight = graph.nodes["param:heads.box.weight"]
    assert weight["shape"] == "[2, 8]" and weight["dtype"] == "Float32"
    assert weight["numel"] == 16 and weight["requires_grad"] is True
    assert graph.nodes["cell:heads.box"]["class_name"] == "Dense"


def test_tied_parameter_is_one_node_owned_by_both_cells():
    graph = graphaudit.to_networkx(Tied())
    (table,) = [n for n, _ in g.nodes_of_kind(graph, g.PARAMETER)]
    assert sorted(g.owners_of(graph, table)) == ["cell:decoder", "cell:embed"]
    assert g.node_paths(graph, table) == ["embed.embedding_table", "decoder.weight"]


def test_tied_parameter_is_read_by_both_calls():
    graph = graphaudit.to_networkx(Tied(), inputs=Tensor([[1, 2, 3]], ms.int32))
    (table,) = [n for n, _ in g.nodes_of_kind(graph, g.PARAMETER)]
    readers = sorted(t for s, t, d in graph.out_edges(table, data=True) if d["kind"] == g.READS)
    assert readers == ["call:decoder#1", "call:embed#1"]


def test_repeated_block_is_one_cell_called_three_times():
    graph = graphaudit.to_networkx(Repeated(), inputs=tensor(1, 4))
    assert kinds(graph)["cell"] == 3  # the net, the SequentialCell, the one block
    assert g.node_paths(graph, "cell:layers.0") == ["layers.0", "layers.1", "layers.2"]
    calls = g.calls_of(graph, "cell:layers.0")
    assert calls == ["call:layers.0#1", "call:layers.0#2", "call:layers.0#3"]
    assert ("call:layers.0#1", "call:layers.0#2") in flows(graph)
    assert ("call:layers.0#3", "output:0") in flows(graph)


def test_residual_add_is_between_the_branches_and_relu():
    graph = graphaudit.to_networkx(Residual(), inputs=tensor(1, 3, 8, 8))
    (add,) = [n for n, d in g.nodes_of_kind(graph, g.OP)]
    assert graph.nodes[add]["op_type"] == "add"
    assert {s for s, t in flows(graph) if t == add} == {"call:bn#1", "call:down.1#1"}
    assert {t for s, t in flows(graph) if s == add} == {"call:relu#1"}
    # the input feeds both branches
    assert {t for s, t in flows(graph) if s == "input:0"} == {"call:conv#1", "call:down.0#1"}
    assert ("call:relu#1", "output:0") in flows(graph)


def test_functional_ops_and_multiple_inputs_and_outputs():
    graph = graphaudit.to_networkx(TwoInputs(), inputs=(tensor(2, 3), tensor(2, 5)))
    ops_by_type = {d["op_type"]: n for n, d in g.nodes_of_kind(graph, g.OP)}
    assert set(ops_by_type) >= {"cat", "sigmoid", "mul", "reshape"}
    edges = flows(graph)
    assert ("input:0", "call:left#1") in edges and ("input:1", "call:right#1") in edges
    assert ("call:left#1", ops_by_type["cat"]) in edges and ("call:right#1", ops_by_type["cat"]) in edges
    assert (ops_by_type["cat"], "call:head#1") in edges
    assert ("call:head#1", ops_by_type["sigmoid"]) in edges
    assert (ops_by_type["sigmoid"], ops_by_type["mul"]) in edges
    assert (ops_by_type["mul"], "output:0") in edges
    assert (ops_by_type["reshape"], "output:1") in edges
    reads = {(s, t) for s, t, _ in g.edges_of_kind(graph, g.READS)}
    assert ("param:scale", ops_by_type["mul"]) in reads
    cat_in = [d for s, t, d in graph.in_edges(ops_by_type["cat"], data=True) if d["kind"] == g.FLOWS]
    assert sorted((d["dst_slot"], d["shape"]) for d in cat_in) == [(0, "[2, 4]"), (1, "[2, 4]")]
    assert graph.nodes["output:1"]["shape"] == "[16]"


def test_cell_dict_and_cell_list_calls():
    graph = graphaudit.to_networkx(Containers(), inputs=tensor(2, 4))
    assert len(g.calls_of(graph, "cell:act")) == 3  # twice in the loop, once as `again`
    assert {t for s, t in flows(graph) if s == "call:act#3"} == {"call:heads.cls#1", "call:heads.box#1"}
    assert graph.nodes["call:heads.cls#1"]["leaf"] is True
    assert graph.nodes["call:stem#1"]["leaf"] is False
    enclosed = {t for s, t, _ in g.edges_of_kind(graph, g.ENCLOSES) if s == "call:stem#1"}
    assert enclosed == {"call:stem.0#1", "call:stem.1#1"}


def test_graph_is_writable_as_graphml_and_node_link(tmp_path):
    graph = graphaudit.to_networkx(Containers(), inputs=tensor(2, 4))
    path = tmp_path / "net.graphml"
    nx.write_graphml(graph, path)
    again = nx.read_graphml(path, force_multigraph=True)
    assert again.number_of_nodes() == graph.number_of_nodes()
    assert again.number_of_edges() == graph.number_of_edges()
    json.dumps(nx.node_link_data(graph, edges="links"))


def test_pass_through_cell_is_shown_on_the_path():
    class PassThrough(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = nn.SequentialCell([])
            self.fc = nn.Dense(4, 4)

        def construct(self, x):
            return self.fc(self.inner(x))

    graph = graphaudit.to_networkx(PassThrough(), inputs=tensor(1, 4))
    assert {("input:0", "call:inner#1"), ("call:inner#1", "call:fc#1")} <= flows(graph)


def test_graph_mode_context_is_traced_in_pynative_and_restored():
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph = graphaudit.to_networkx(Residual(), inputs=tensor(1, 3, 8, 8))
        assert ms.get_context("mode") == ms.GRAPH_MODE
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert any(d["kind"] == g.OP for _, d in graph.nodes(data=True))


def test_unregistered_cell_in_a_plain_list_is_still_recorded():
    class Hidden(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4, 4)
            self.extra = [nn.Dense(4, 4)]  # a plain list: MindSpore does not register it

        def construct(self, x):
            return self.extra[0](self.fc(x))

    graph = graphaudit.to_networkx(Hidden(), inputs=tensor(1, 4))
    (call,) = [n for n, d in g.nodes_of_kind(graph, g.CALL) if d["cell"] == ""]
    assert graph.nodes[call]["class_name"] == "Dense"
    unregistered = [n for n, d in g.nodes_of_kind(graph, g.PARAMETER) if d.get("registered") is False]
    assert len(unregistered) == 2
    assert ("call:fc#1", call) in flows(graph)


def test_functional_op_at_top_level_of_a_leaf_free_network():
    class Functional(nn.Cell):
        def construct(self, x):
            return ops.relu(x) + 1

    graph = graphaudit.to_networkx(Functional(), inputs=tensor(2, 2))
    assert [d["op_type"] for _, d in g.nodes_of_kind(graph, g.OP)] == ["relu", "add"]


@pytest.mark.parametrize("kind", ["bogus"])
def test_unknown_kind_is_rejected(kind):
    with pytest.raises(ValueError, match="unknown node kind"):
        list(g.nodes_of_kind(nx.MultiDiGraph(), kind))


def test_every_flow_carries_its_tensors_shape_and_dtype_however_late_it_is_described():
    """Flows are described a few events after they are recorded (recorder.DESCRIBE_LAG): all of them, right."""
    from graphaudit.capture.network.recorder import DESCRIBE_LAG

    widths = [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
    layers = [nn.Dense(a, b) for a, b in zip(widths, widths[1:])]
    net = nn.SequentialCell([cell for layer in layers for cell in (layer, nn.ReLU())])
    graph = graphaudit.to_networkx(net, inputs=tensor(2, 4))

    flows = list(g.edges_of_kind(graph, g.FLOWS))
    assert len(flows) > 2 * DESCRIBE_LAG

    def expected(target: str) -> list[int]:
        if target == "output:0":
            return [2, widths[-1]]
        position = int(graph.nodes[target]["path"])  # the SequentialCell's k-th cell: Dense, ReLU, Dense...
        return [2, widths[position // 2 + position % 2]]

    for source, target, data in flows:
        assert (json.loads(data["shape"]), data["dtype"]) == (expected(target), "Float32"), (source, target)
