"""to_networkx on real third-party networks from mindcv (pretrained=False: no downloads)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from mindcv_models import unmodified
from mindspore import Tensor

import graphaudit
from graphaudit import graph as g

mindcv = pytest.importorskip("mindcv")

# (model, input size, op type expected between cells, how many of them)
MODELS = [
    ("resnet18", 64, "add", 8),  # one residual add per BasicBlock
    ("mobilenet_v3_small_100", 64, "add", 6),
    ("densenet121", 64, "concat", 58),  # one concat per dense layer
    ("efficientnet_b0", 64, "add", 9),
    ("vit_b_32_224", 224, "softmax", 12),  # one attention softmax per encoder layer
]


@pytest.fixture(scope="module", params=MODELS, ids=[m[0] for m in MODELS])
def captured(request):
    name, size, op_type, count = request.param
    net = unmodified(name)
    x = Tensor(np.random.default_rng(0).random((1, 3, size, size), dtype=np.float32))
    return net, graphaudit.to_networkx(net, inputs=x), op_type, count


@pytest.mark.slow
def test_one_node_per_unique_cell_and_parameter(captured):
    net, graph, _, _ = captured
    params = list(net.get_parameters())
    param_nodes = list(g.nodes_of_kind(graph, g.PARAMETER))
    assert len(param_nodes) == len(params)
    assert sum(d["requires_grad"] for _, d in param_nodes) == len(net.trainable_params())
    assert sum(d["numel"] for _, d in param_nodes) == sum(p.size for p in params)
    assert len(list(g.nodes_of_kind(graph, g.CELL))) == len(list(net.cells_and_names()))
    assert len(list(g.edges_of_kind(graph, g.OWNS))) == len(params)


@pytest.mark.slow
def test_every_parameter_is_read_and_every_call_reaches_the_output(captured):
    _, graph, _, _ = captured
    for node, _ in g.nodes_of_kind(graph, g.PARAMETER):
        assert any(d["kind"] == g.READS for _, _, d in graph.out_edges(node, data=True)), node
    flow_graph = graph.edge_subgraph(
        (s, t, k) for s, t, k, d in graph.edges(keys=True, data=True) if d["kind"] == g.FLOWS
    )
    for node, attrs in g.nodes_of_kind(graph, g.CALL):
        if attrs["leaf"] and node in flow_graph:
            assert "output:0" in nx.descendants(flow_graph, node), node


@pytest.mark.slow
def test_functional_ops_between_cells_are_captured(captured):
    _, graph, op_type, count = captured
    found = [n for n, d in g.nodes_of_kind(graph, g.OP) if d["op_type"] == op_type]
    assert len(found) == count
    for node in found:
        inputs = [s for s, _, d in graph.in_edges(node, data=True) if d["kind"] == g.FLOWS]
        assert inputs, node
