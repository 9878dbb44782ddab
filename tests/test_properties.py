"""Property-based tests: random real MindSpore networks, invariants that must always hold.

Hypothesis draws a *recipe* (plain data, so failures shrink and print readably), and the
recipe is built into a real network of tiny cells (``Dense(2, 2)``, ``ReLU``, a ``Scale`` cell
holding one ``Parameter``): random nesting of custom cells, ``SequentialCell`` (from a list or
an ordered dict), ``CellList`` and ``CellDict`` (keys in the alphabet MindSpore accepts:
ASCII letters, digits, ``_`` and ``-``, no dots), cells reused in several places, parameters
tied across cells, random freezing, random training flags, and random optimizers (none,
``nn.SGD`` over everything or a subset, ``nn.Momentum`` with parameter groups). Every cell's
``construct`` calls each registered child in order, so one forward pass on a ``(1, 2)``
input reaches every cell.

Invariants:

- the graph's parameter nodes are exactly the network's unique parameters (by object
  identity, as ``net.get_parameters()`` lists them), and likewise for cells;
- every cell node is reachable from the root through ``contains`` edges;
- the audit's findings are deterministic: the same network and optimizer audited twice, and
  a second network built from the same recipe, give the same findings in the same order;
- ``Spec.from_net`` snapshots round-trip through TOML and ``assert_matches_spec`` passes on
  the network they were taken from;
- ``audit()`` leaves parameter values, ``requires_grad``, training flags, the optimizer's
  state, the context mode and the MindSpore / NumPy / Python random states untouched.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

import mindspore as ms
import networkx as nx
import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mindspore import Parameter, Tensor, nn, ops

import graphaudit
from graphaudit import graph as g
from graphaudit.capture import capture
from graphaudit.testing import assert_matches_spec

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,  # the same examples on every run: a property failure reproduces
    report_multiple_bugs=False,
)

# CellDict keys: MindSpore accepts ASCII letters, digits, '_' and '-' (checked: a dot, a space,
# a quote, a slash, '[' or a non-ASCII letter are refused when the cell is registered), and
# refuses a key that is already an attribute of the container ('__lt__', 'training', 'cells'...).
KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"


def _free_name(name: str) -> bool:
    return not any(hasattr(cell, name) for cell in _SAMPLE_CELLS)


keys = st.text(KEY_ALPHABET, min_size=1, max_size=6).filter(_free_name)
attribute_names = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True).filter(_free_name)


# --------------------------------------------------------------------------- the networks


class Scale(nn.Cell):
    """``x * s`` with one parameter of its own (so ties are not only between Dense cells)."""

    def __init__(self) -> None:
        super().__init__()
        self.s = Parameter(Tensor(np.full((2,), 1.5, np.float32)), name="s")

    def construct(self, x: Tensor) -> Tensor:
        return x * self.s


def run(cell: nn.Cell, x: Tensor) -> Tensor:
    """Call *cell* on *x*; a CellList / CellDict (not callable) runs each child in order."""
    if isinstance(cell, nn.CellList):
        for child in cell:
            x = run(child, x)
        return x
    if isinstance(cell, nn.CellDict):
        for child in cell.values():
            x = run(child, x)
        return x
    return cell(x)


class Block(nn.Cell):
    """A custom cell whose construct calls every registered child, in registration order."""

    def __init__(self, children: list[tuple[str, nn.Cell]]) -> None:
        super().__init__()
        self.order = tuple(name for name, _ in children)
        for name, child in children:
            setattr(self, name, child)

    def construct(self, x: Tensor) -> Tensor:
        for name in self.order:
            x = run(getattr(self, name), x)
        return ops.tanh(x)  # a functional op between cells


_SAMPLE_CELLS = (nn.CellDict(), nn.SequentialCell(), nn.CellList(), Block([]))

LEAVES = ("dense", "dense_no_bias", "relu", "scale")
CONTAINERS = ("block", "seq", "seq_dict", "cell_list", "cell_dict")


def recipes() -> st.SearchStrategy:
    """A tree: ("leaf", kind) | ("ref", k) | (container, [(key, subtree), ...])."""
    leaf = st.tuples(st.just("leaf"), st.sampled_from(LEAVES))
    ref = st.tuples(st.just("ref"), st.integers(0, 20))
    base = st.one_of(leaf, ref)

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        kinds = st.sampled_from(CONTAINERS)
        return st.tuples(kinds, st.lists(st.tuples(keys, children), max_size=3))

    return st.recursive(base, extend, max_leaves=7)


network_recipes = st.fixed_dictionaries(
    {
        "tree": st.lists(st.tuples(attribute_names, recipes()), min_size=2, max_size=3),
        "ties": st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=3),
        "frozen": st.lists(st.booleans(), max_size=12),
        "training": st.lists(st.booleans(), max_size=12),
        "optimizer": st.sampled_from(["momentum_groups", "sgd", "sgd_subset", "none"]),
        "group_split": st.lists(st.booleans(), max_size=12),
        "loss": st.booleans(),
        "mode": st.sampled_from([None, "train", "eval"]),
        "graph_mode": st.booleans(),
        "depth": st.integers(1, 2),
    }
)


def _wrapped(cell: nn.Cell, refused: tuple[type, ...]) -> nn.Cell:
    return Block([("inner", cell)]) if isinstance(cell, refused) else cell


def _build(tree: Any, pool: list[nn.Cell]) -> nn.Cell:
    kind = tree[0]
    if kind == "ref":
        if pool:  # reuse an earlier, finished cell: sharing without cycles
            return pool[tree[1] % len(pool)]
        kind, tree = "leaf", ("leaf", "dense")
    if kind == "leaf":
        cell = {
            "dense": lambda: nn.Dense(2, 2),
            "dense_no_bias": lambda: nn.Dense(2, 2, has_bias=False),
            "relu": nn.ReLU,
            "scale": Scale,
        }[tree[1]]()
    else:
        # A SequentialCell calls its children (a CellList / CellDict cannot be called), a
        # CellList refuses a CellDict and a CellDict refuses containers: such children are
        # wrapped in a Block.
        refused = {
            "seq": (nn.CellList, nn.CellDict),
            "seq_dict": (nn.CellList, nn.CellDict),
            "cell_list": (nn.CellDict,),
            "cell_dict": (nn.SequentialCell, nn.CellList, nn.CellDict),
        }.get(kind, ())
        children = []
        seen: set[str] = set()
        for key, sub in tree[1]:
            if key not in seen:
                seen.add(key)
                children.append((key, _wrapped(_build(sub, pool), refused)))
        if kind == "block":
            cell = Block([(f"c_{key.replace('-', '_')}", child) for key, child in children])
        elif kind == "seq":
            cell = nn.SequentialCell([child for _, child in children])
        elif kind == "seq_dict":
            cell = nn.SequentialCell(OrderedDict(children))
        elif kind == "cell_list":
            cell = nn.CellList([child for _, child in children])
        else:
            cell = nn.CellDict(OrderedDict(children))
    pool.append(cell)
    return cell


def build(recipe: dict[str, Any]) -> tuple[nn.Cell, Any, Any, list[nn.Cell]]:
    """The network, its optimizer (or None) and loss (or None) described by *recipe*."""
    pool: list[nn.Cell] = []
    children, seen = [], set()
    for name, tree in recipe["tree"]:
        if name in seen:
            continue
        seen.add(name)
        children.append((name, _build(tree, pool)))
    net = Block(children)

    holders = [c for c in pool if isinstance(c, (nn.Dense, Scale))]
    for i, j in recipe["ties"]:
        if not holders:
            break
        a, b = holders[i % len(holders)], holders[j % len(holders)]
        if a is b or type(a) is not type(b):
            continue
        if isinstance(a, Scale):
            b.s = a.s
        else:
            b.weight = a.weight

    params = list(net.get_parameters())
    for param, frozen in zip(params, recipe["frozen"]):
        param.requires_grad = not frozen
    cells = all_cells(net)
    for cell, training in zip(cells, recipe["training"]):
        cell.training = training  # per cell, not recursive: mixed modes on purpose

    trainable = net.trainable_params()
    optimizer = None
    kind = recipe["optimizer"]
    try:
        if kind == "sgd" and trainable:
            optimizer = nn.SGD(trainable, learning_rate=0.1)
        elif kind == "sgd_subset" and trainable:
            optimizer = nn.SGD(trainable[: max(1, len(trainable) // 2)], learning_rate=0.1)
        elif kind == "momentum_groups" and trainable:
            flags = [*recipe["group_split"], *[False] * len(trainable)]
            first = [p for p, f in zip(trainable, flags) if f]
            second = [p for p, f in zip(trainable, flags) if not f]
            groups = [
                grp
                for grp in ({"params": first, "weight_decay": 0.01}, {"params": second, "lr": 0.05})
                if grp["params"]
            ]
            optimizer = nn.Momentum(groups, learning_rate=0.01, momentum=0.9)
    except (ValueError, RuntimeError, TypeError) as err:  # MindSpore refused (e.g. a name clash)
        event(f"optimizer refused by MindSpore: {type(err).__name__}")
        optimizer = None
    loss = nn.MSELoss() if recipe["loss"] else None
    cells = all_cells(net)
    slots = 1 + sum(sum(child is not None for child in cell._cells.values()) for cell in cells)
    event(f"shared cell: {slots > len(cells)}")
    event(f"tied parameter: {sum(len(cell._params) for cell in cells) > len(params)}")
    event(f"frozen parameter: {any(not p.requires_grad for p in params)}")
    event(
        f"optimizer: {type(optimizer).__name__}{' with groups' if optimizer is not None and optimizer.is_group else ''}"
    )
    return net, optimizer, loss, pool


X = Tensor(np.array([[0.5, -1.0]], np.float32))


# --------------------------------------------------------------------------- state helpers


def all_cells(net: nn.Cell) -> list[nn.Cell]:
    """Every cell object under *net* (walking ``_cells`` by identity).

    Not ``net.cells_and_names()``: MindSpore's walk tests each child's truth value, so it skips
    an empty ``SequentialCell`` / ``CellList`` / ``CellDict`` (``len() == 0``) although the
    network holds it; graphaudit lists it, rightly.
    """
    found: dict[int, nn.Cell] = {id(net): net}
    stack = [net]
    while stack:
        for child in stack.pop()._cells.values():
            if child is not None and id(child) not in found:
                found[id(child)] = child
                stack.append(child)
    return list(found.values())


def network_state(net: nn.Cell) -> dict[str, Any]:
    return {
        "values": [p.asnumpy().tobytes() for p in net.get_parameters()],
        "requires_grad": [p.requires_grad for p in net.get_parameters()],
        "names": [p.name for p in net.get_parameters()],
        "training": [c.training for c in all_cells(net)],
        "mode": ms.get_context("mode"),
    }


def optimizer_state(optimizer: Any) -> Any:
    if optimizer is None:
        return None
    return {
        "state": [(p.name, p.asnumpy().tobytes()) for p in optimizer.get_parameters()],
        "params": [id(p) for p in optimizer.parameters],
        "group_lr": bool(optimizer.is_group_lr),
    }


def random_draws() -> tuple:
    return (
        ops.uniform((3,), Tensor(0.0), Tensor(1.0)).asnumpy().tobytes(),
        np.random.rand(),
        random.random(),
    )


def seed_all(seed: int) -> None:
    ms.set_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def findings_of(report: graphaudit.Report) -> list[tuple]:
    return [(f.check_id, f.severity, f.subject, f.message, f.fix, f.nodes) for f in report.findings]


# --------------------------------------------------------------------------- the properties


@SETTINGS
@given(recipe=network_recipes)
def test_structure_matches_the_network_object_for_object(recipe):
    net, _, _, _ = build(recipe)
    for inputs in (None, X):
        graph, structure = capture(net, inputs)[:2]
        params = list(net.get_parameters())
        nodes = list(g.nodes_of_kind(graph, g.PARAMETER))
        assert len(nodes) == len(params) == len({id(p) for p in params})
        assert {id(p) for p in structure.parameters.values()} == {id(p) for p in params}
        assert [d["requires_grad"] for _, d in nodes] == [
            structure.parameters[n].requires_grad for n, _ in nodes
        ]

        cells = all_cells(net)
        cell_nodes = [n for n, _ in g.nodes_of_kind(graph, g.CELL)]
        assert len(cell_nodes) == len(cells)
        assert {id(c) for c in structure.cells.values()} == {id(c) for c in cells}

        contains = nx.DiGraph((s, t) for s, t, _ in g.edges_of_kind(graph, g.CONTAINS))
        contains.add_node("cell:")
        reachable = nx.descendants(contains, "cell:") | {"cell:"}
        assert set(cell_nodes) <= reachable, set(cell_nodes) - reachable
        if inputs is not None:  # every cell is called (construct calls every child)
            for node in cell_nodes:
                cell = structure.cells[node]
                if not isinstance(cell, (nn.CellList, nn.CellDict)):
                    assert g.calls_of(graph, node), node


@SETTINGS
@given(recipe=network_recipes)
def test_audit_is_deterministic_and_changes_nothing(recipe):
    net, optimizer, loss, _ = build(recipe)
    if recipe["graph_mode"]:
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        before_net, before_opt = network_state(net), optimizer_state(optimizer)
        seed_all(11)
        expected = random_draws()
        seed_all(11)

        first = graphaudit.audit(net, optimizer, inputs=X, loss_fn=loss, mode=recipe["mode"])

        assert ms.get_context("mode") == (ms.GRAPH_MODE if recipe["graph_mode"] else ms.PYNATIVE_MODE)
        ms.set_context(mode=ms.PYNATIVE_MODE)  # ops.uniform below runs eagerly
        assert random_draws() == expected
        assert network_state(net) == {**before_net, "mode": ms.PYNATIVE_MODE}
        assert optimizer_state(optimizer) == before_opt

        second = graphaudit.audit(net, optimizer, inputs=X, loss_fn=loss, mode=recipe["mode"])
        assert findings_of(second) == findings_of(first)
        assert second.checks_run == first.checks_run
        structural = graphaudit.audit(net, optimizer, mode=recipe["mode"])  # no inputs: structure only
        assert findings_of(structural) == findings_of(graphaudit.audit(net, optimizer, mode=recipe["mode"]))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)

    twin, twin_optimizer, twin_loss, _ = build(recipe)  # same recipe, new objects, new random weights
    again = graphaudit.audit(twin, twin_optimizer, inputs=X, loss_fn=twin_loss, mode=recipe["mode"])
    assert [(f.check_id, f.subject) for f in again.findings] == [
        (f.check_id, f.subject) for f in first.findings
    ]


@SETTINGS
@given(recipe=network_recipes)
def test_snapshot_round_trips_and_matches_its_own_network(recipe):
    net, _, _, _ = build(recipe)
    before = network_state(net)
    for inputs in (None, X):
        spec = graphaudit.Spec.from_net(net, inputs, depth=recipe["depth"])
        assert graphaudit.Spec.from_toml(spec.to_toml()) == spec
        assert graphaudit.Spec.from_toml(spec.to_toml()).to_toml() == spec.to_toml()
        assert spec.diff(spec) == []
        assert_matches_spec(net, spec, inputs=inputs)
    assert network_state(net) == before
