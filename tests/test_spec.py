"""Spec: the TOML form (round trip, errors with file and line), snapshots of real networks, diff."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mindspore import Tensor, nn

import graphaudit
from graphaudit.errors import GraphAuditError, SpecError
from graphaudit.spec import Spec, escape, glob_problem, matches_any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from nets import Containers, Repeated, Tied, tensor

ODD = [
    'a "quoted" name',
    "back\\slash",
    "ünïcödé.权重.🙂",
    "tab\there",
    "new\nline",
    "bell\x07 and del\x7f",
    "single 'quotes'",
    "hash # not a comment",
    "= [[not.a.table]] =",
]
ODD = [escape(name) for name in ODD]  # names as exact-match patterns, as snapshots hold them


def full_spec() -> Spec:
    return Spec(
        frozen=["backbone.*", escape("heads[0].weight"), *ODD[:3]],
        trainable=["head.*"],
        shared_parameters=[["embed.embedding_table", "decoder.weight"], [ODD[0], ODD[1]]],
        shared_cells=[["layers.0", "layers.1", "layers.2"], [ODD[2], ODD[3]]],
        expected_connections=[("stem", "body"), ("body", "head"), (ODD[4], ODD[5])],
        forbidden_connections=[("head", "stem"), (ODD[6], ODD[7])],
        exhaustive_connections=True,
        calls={"layers.0": 3, "head": 1, ODD[8]: 0, ODD[0]: 2},
    )


def write(tmp_path: Path, text: str, name: str = "design.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- round trip


def test_round_trip_through_text_and_file(tmp_path: Path) -> None:
    spec = full_spec()
    text = spec.to_toml()
    assert Spec.from_toml(text) == spec
    assert Spec.from_toml(text).to_toml() == text  # byte for byte
    path = tmp_path / "sub" / "design.toml"
    spec.save(path)
    loaded = Spec.load(path)
    assert loaded == spec
    assert loaded.source == str(path)
    assert path.read_text(encoding="utf-8") == text
    assert isinstance(loaded.expected_connections[0], tuple)


def test_the_toml_form_is_the_documented_layout() -> None:
    data = tomllib.loads(full_spec().to_toml())
    assert data["parameters"]["frozen"][0] == "backbone.*"
    assert data["shared"]["parameters"][0] == {"names": ["embed.embedding_table", "decoder.weight"]}
    assert data["shared"]["cells"][0] == {"paths": ["layers.0", "layers.1", "layers.2"]}
    assert data["connections"]["expected"][0] == ["stem", "body"]
    assert data["connections"]["exhaustive"] is True
    assert data["calls"]["layers.0"] == 3


def test_empty_spec_round_trips_and_hand_written_minimal_files_load() -> None:
    assert Spec.from_toml(Spec().to_toml()) == Spec()
    assert Spec.from_toml("") == Spec()
    spec = Spec.from_toml('[calls]\n"layers.0" = 3\n[parameters]\nfrozen = ["a"]\n')
    assert spec == Spec(frozen=["a"], calls={"layers.0": 3})


def test_long_lists_are_written_one_item_per_line() -> None:
    names = [f"backbone.layer{i}.conv.weight" for i in range(10)]
    text = Spec(frozen=names).to_toml()
    assert 'frozen = [\n    "backbone.layer0.conv.weight",\n' in text
    assert Spec.from_toml(text).frozen == names


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1), min_size=1, max_size=4),
    count=st.integers(min_value=0, max_value=2**40),
)
def test_round_trip_of_any_names(names: list[str], count: int) -> None:
    patterns = [escape(n) for n in names]
    spec = Spec(
        frozen=patterns,
        shared_cells=[patterns],
        expected_connections=[(p, p) for p in patterns],
        calls={p: count for p in patterns},
    )
    assert Spec.from_toml(spec.to_toml()) == spec
    assert all(matches_any([escape(n)], n) for n in names)


def test_escape_makes_names_literal() -> None:
    assert matches_any([escape("a[0]*?")], "a[0]*?")
    assert not matches_any([escape("a*")], "ab")
    assert glob_problem(escape("x[[y")) is None


# ----------------------------------------------------------------------------- bad files


def load_error(tmp_path: Path, text: str) -> SpecError:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        Spec.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:"), message
    assert info.value.source == str(path)
    return info.value


def line_of(err: SpecError) -> int:
    match = re.match(r".*?:(\d+): ", str(err))
    assert match, str(err)
    assert int(match.group(1)) == err.line
    return err.line


def test_spec_error_is_a_graphaudit_value_error() -> None:
    assert issubclass(SpecError, GraphAuditError)
    assert issubclass(SpecError, ValueError)


def test_toml_syntax_error_names_file_and_line_and_chains(tmp_path: Path) -> None:
    err = load_error(
        tmp_path,
        """
        [parameters]
        frozen = ["a"]
        trainable = ["b"
        [calls]
        """,
    )
    assert line_of(err) in (3, 4)
    assert "TOML syntax error" in str(err)
    assert isinstance(err.__cause__, tomllib.TOMLDecodeError)


def test_duplicate_key_is_a_syntax_error_with_its_line(tmp_path: Path) -> None:
    err = load_error(tmp_path, '[calls]\n"a" = 1\n"a" = 2\n')
    assert line_of(err) == 3


def test_unknown_section_suggests_the_close_one(tmp_path: Path) -> None:
    err = load_error(
        tmp_path,
        """
        # my design

        [parameter]
        frozen = ["backbone.*"]
        """,
    )
    assert line_of(err) == 3
    assert "unknown key 'parameter'" in str(err)
    assert "did you mean 'parameters'?" in str(err)


def test_unknown_key_suggests_the_close_one(tmp_path: Path) -> None:
    err = load_error(
        tmp_path,
        """
        [parameters]
        frozen = []

        [connections]
        expected = []
        exhaustiv = true
        """,
    )
    assert line_of(err) == 6
    assert "did you mean 'exhaustive'?" in str(err)
    assert "[connections]" in str(err)


def test_unknown_key_in_a_group(tmp_path: Path) -> None:
    err = load_error(
        tmp_path,
        """
        [[shared.cells]]
        paths = ["a", "b"]

        [[shared.cells]]
        path = ["c", "d"]
        """,
    )
    assert line_of(err) == 5
    assert "did you mean 'paths'?" in str(err)


def test_string_where_a_list_is_expected(tmp_path: Path) -> None:
    err = load_error(tmp_path, '[parameters]\ntrainable = []\nfrozen = "backbone.*"\n')
    assert line_of(err) == 3
    assert "parameters.frozen must be a list" in str(err)
    assert "got a string" in str(err)


def test_non_string_pattern(tmp_path: Path) -> None:
    err = load_error(tmp_path, "[parameters]\nfrozen = [\n  'a',\n  3,\n]\n")
    assert line_of(err) == 4
    assert "parameters.frozen[1] must be a string" in str(err)


def test_connection_that_is_not_a_pair(tmp_path: Path) -> None:
    err = load_error(
        tmp_path,
        """
        [connections]
        expected = [
            ["stem", "body"],
            ["body"],
        ]
        """,
    )
    assert line_of(err) == 4
    assert "connections.expected[1] must be a pair [source, target]" in str(err)


def test_connection_of_three(tmp_path: Path) -> None:
    err = load_error(tmp_path, '[connections]\nforbidden = [["a", "b", "c"]]\n')
    assert line_of(err) == 2
    assert "connections.forbidden[0]" in str(err)


@pytest.mark.parametrize(
    ("value", "shown"),
    [("-1", "-1"), ("2.5", "2.5"), ('"3"', "'3'"), ("true", "True")],
)
def test_bad_call_counts(tmp_path: Path, value: str, shown: str) -> None:
    err = load_error(tmp_path, f'[calls]\n"stem" = 1\n"layers.0" = {value}\n')
    assert line_of(err) == 3
    assert "'layers.0' must be a non-negative integer" in str(err)
    assert shown in str(err)


def test_unquoted_dotted_call_path_gets_a_hint(tmp_path: Path) -> None:
    err = load_error(tmp_path, "[calls]\nstem = 1\nlayers.0 = 3\n")
    assert line_of(err) == 3
    assert 'must be quoted, e.g. "layers.0" = 1' in str(err)


def test_malformed_glob_points_at_its_line(tmp_path: Path) -> None:
    err = load_error(
        tmp_path,
        """
        [parameters]
        frozen = [
            "backbone.*",
            "layers.[0.weight",
        ]
        """,
    )
    assert line_of(err) == 4
    assert "unbalanced '['" in str(err)
    assert "'layers.[0.weight'" in str(err)


def test_malformed_glob_in_a_group_a_connection_and_a_call(tmp_path: Path) -> None:
    err = load_error(
        tmp_path, '[[shared.parameters]]\nnames = ["a", "b"]\n[[shared.parameters]]\nnames = ["c[", "d"]\n'
    )
    assert line_of(err) == 4
    err = load_error(tmp_path, '[connections]\nexpected = [\n ["a", "b"],\n ["c", "[d"],\n]\n')
    assert line_of(err) == 4
    err = load_error(tmp_path, '[calls]\n"a" = 1\n"b[" = 2\n')
    assert line_of(err) == 3


def test_wrong_types_of_tables_and_flags(tmp_path: Path) -> None:
    err = load_error(tmp_path, "[parameters]\nfrozen = []\n[connections]\nexhaustive = 'yes'\n")
    assert line_of(err) == 4
    assert "true or false" in str(err)
    err = load_error(tmp_path, "calls = 3\n")
    assert line_of(err) == 1
    assert "calls must be a table" in str(err)
    err = load_error(tmp_path, '[shared]\nparameters = [["a", "b"]]\n')
    assert line_of(err) == 2
    assert "[[shared.parameters]]" in str(err)
    err = load_error(tmp_path, "[[shared.cells]]\npaths = []\n")
    assert line_of(err) == 2
    assert "empty" in str(err)
    err = load_error(tmp_path, '[[shared.cells]]\n# nothing\n[calls]\n"a" = 1\n')
    assert line_of(err) == 1
    assert "has no paths" in str(err)


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"nope\.toml: cannot read the spec file") as info:
        Spec.load(tmp_path / "nope.toml")
    assert isinstance(info.value.__cause__, OSError)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[calls]\n"\xe9" = 1\n')
    with pytest.raises(SpecError, match=r"latin1\.toml"):
        Spec.load(bad)


def test_from_toml_without_a_source_still_gives_the_line() -> None:
    with pytest.raises(SpecError, match=r"^<spec>:2: "):
        Spec.from_toml("[parameters]\nfozen = []\n")


def test_save_refuses_a_malformed_spec(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="must be a list"):
        Spec(frozen="backbone.*").save(tmp_path / "x.toml")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="unbalanced"):
        Spec(calls={"a[": 1}).to_toml()
    assert not (tmp_path / "x.toml").exists()


# ----------------------------------------------------------------------------- from_net


class Backbone(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 8)])
        self.head = nn.Dense(8, 2)

    def construct(self, x: Tensor) -> Tensor:
        return self.head(self.backbone(x))


def frozen_backbone() -> Backbone:
    net = Backbone()
    for param in net.backbone.get_parameters():
        param.requires_grad = False
    return net


X4 = Tensor(np.ones((2, 4), np.float32))
IDS = Tensor(np.array([[1, 2, 3]], np.int32))


def test_from_net_tied_weights() -> None:
    spec = Spec.from_net(Tied())
    assert spec.shared_parameters == [["embed.embedding_table", "decoder.weight"]]
    assert spec.shared_cells == []
    assert spec.frozen == []
    assert spec.expected_connections == [] and spec.calls == {}  # no inputs: structure only
    traced = Spec.from_net(Tied(), IDS)
    assert traced.expected_connections == [("embed", "decoder")]
    assert traced.exhaustive_connections is True
    assert traced.calls == {"embed": 1, "decoder": 1}


def test_from_net_repeated_block() -> None:
    block = nn.Dense(4, 4)
    spec = Spec.from_net(nn.SequentialCell([block] * 3), X4)
    assert spec.shared_cells == [["0", "1", "2"]]
    assert spec.shared_parameters == []  # one owner (the block), several paths: a shared cell
    assert spec.calls == {"0": 3}
    assert spec.expected_connections == []

    nested = Spec.from_net(Repeated(), X4)
    assert nested.shared_cells == [["layers.0", "layers.1", "layers.2"]]
    assert nested.calls == {"layers": 1, "layers.0": 3}
    deeper = Spec.from_net(Repeated(), X4, depth=2)
    assert deeper.calls == {"layers.0": 3}


def test_from_net_frozen_backbone() -> None:
    net = frozen_backbone()
    spec = Spec.from_net(net, X4)
    names = sorted(p.name for p in net.backbone.get_parameters())
    assert spec.frozen == names
    assert spec.is_frozen("backbone.0.weight") and not spec.is_frozen("head.weight")
    assert spec.expected_connections == [("backbone", "head")]
    assert spec.calls == {"backbone": 1, "head": 1}
    assert all(p.requires_grad is False for p in net.backbone.get_parameters())  # untouched


def test_from_net_depth_two_and_shared_cells_without_parameters() -> None:
    spec = Spec.from_net(Containers(), tensor(2, 4), depth=2)
    assert ("stem.0", "stem.1") in spec.expected_connections
    assert ("stem.1", "blocks.0") in spec.expected_connections
    assert spec.calls["stem.0"] == 1
    assert spec.calls["act"] == 3  # act (= again) has no parameters: not a shared cell group
    assert spec.shared_cells == []


def test_from_net_snapshot_survives_the_file(tmp_path: Path) -> None:
    spec = Spec.from_net(Containers(), tensor(2, 4), depth=2)
    spec.save(tmp_path / "c.toml")
    assert Spec.load(tmp_path / "c.toml") == spec


def test_from_net_bad_arguments() -> None:
    with pytest.raises(SpecError, match="depth >= 1"):
        Spec.from_net(Tied(), depth=0)
    with pytest.raises(graphaudit.NotACellError):
        Spec.from_net([1, 2])


# ----------------------------------------------------------------------------- diff


def test_diff_of_equal_designs_is_empty() -> None:
    assert full_spec().diff(full_spec()) == []
    assert Spec.from_net(Tied(), IDS).diff(Spec.from_net(Tied(), IDS)) == []


def test_diff_lists_every_difference() -> None:
    declared = Spec(
        frozen=["backbone.*"],
        trainable=["head.*"],
        shared_parameters=[["embed.embedding_table", "decoder.weight"]],
        shared_cells=[["layers.*"]],
        expected_connections=[("stem", "body"), ("body", "head")],
        forbidden_connections=[("head", "*")],
        exhaustive_connections=True,
        calls={"layers.0": 3, "ghost": 1},
    )
    actual = Spec(
        frozen=["head.weight"],
        shared_cells=[["layers.0", "layers.1"], ["x", "y"]],
        expected_connections=[("stem", "body"), ("stem", "head"), ("head", "stem")],
        calls={"layers.0": 2, "refine": 4},
    )
    lines = declared.diff(actual)
    text = "\n".join(lines)
    assert "'head.weight' is frozen (requires_grad=False), but the spec declares it trainable" in text
    assert "the spec declares 'backbone.*' frozen, but no frozen parameter matches it" in text
    assert "['embed.embedding_table', 'decoder.weight'] are declared shared, but" in text
    assert "shared cells: ['x', 'y'] are shared in the network, but the spec does not declare it" in text
    assert "connections: body -> head is expected, but the network has no such connection" in text
    assert "connections: head -> stem is in the network, but the spec forbids it (matches head -> *)" in text
    assert "connections: stem -> head is in the network, but the spec does not declare it" in text
    assert "calls: 'layers.0' is called 2 times in one forward pass, but the spec says 3" in text
    assert "calls: the spec says 'ghost' is called 1 time" in text
    assert "calls: 'refine' is called 4 times in one forward pass, but the spec does not declare it" in text
    assert len(lines) == 10, text


def test_diff_reads_snapshot_names_literally() -> None:
    declared = Spec(frozen=[escape("a[0].w")])
    assert declared.diff(Spec(frozen=[escape("a[0].w")])) == []
    assert declared.diff(Spec(frozen=[escape("a0.w")])) != []


def test_diff_with_the_parameters_observed_trainable() -> None:
    declared = Spec(frozen=["backbone.*"], trainable=["backbone.head.*"])
    lines = declared.diff(Spec(), trainable=["backbone.0.weight", "backbone.head.weight", "head.bias"])
    assert lines == [
        "frozen: 'backbone.0.weight' is trainable (requires_grad=True), but the spec declares it frozen"
    ]
    assert declared.diff(Spec(frozen=["backbone.0.weight"])) == []


# ----------------------------------------------------------------------------- from_graph


def test_from_graph_of_a_captured_graph_is_from_net() -> None:
    graph = graphaudit.to_networkx(Containers(), inputs=tensor(2, 4))
    for depth in (1, 2):
        assert Spec.from_graph(graph, depth=depth) == Spec.from_net(Containers(), tensor(2, 4), depth=depth)
    structure = graphaudit.to_networkx(Tied())  # not traced: no connections, no calls
    assert Spec.from_graph(structure) == Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])


def test_from_graph_without_a_level_records_only_the_paths_asked_for() -> None:
    graph = graphaudit.to_networkx(Containers(), inputs=tensor(2, 4))
    spec = Spec.from_graph(graph, depth=None, connection_paths=["stem.0", "stem.1"], call_paths=["stem.1"])
    assert spec.expected_connections == [("stem.0", "stem.1")]
    assert spec.calls["stem.1"] == 1
    assert "stem.0" not in spec.calls  # asked for its connections, not its calls
    assert spec.calls["act"] == 3  # a cell called more than once is always listed
    with pytest.raises(SpecError, match="depth >= 1"):
        Spec.from_graph(graph, depth=0)


# ----------------------------------------------------------------------------- the package


def test_every_public_name_keeps_its_address() -> None:
    import graphaudit.spec as package
    from graphaudit.spec import model, patterns

    assert graphaudit.Spec is package.Spec is model.Spec
    assert (package.matches_any, package.escape, package.glob_problem) == (
        patterns.matches_any,
        patterns.escape,
        patterns.glob_problem,
    )
    assert sorted(package.__all__) == ["Spec", "escape", "glob_problem", "matches_any"]


def test_importing_the_spec_package_stays_light(tmp_path: Path) -> None:
    import twins

    code = (
        "import sys, graphaudit.spec\n"
        "graphaudit.spec.Spec.from_toml('[calls]\\n\"a\" = 1\\n').to_toml()\n"
        "print(sorted(m for m in ('mindspore', 'networkx', 'graphaudit.capture') if m in sys.modules))"
    )
    assert twins.finish(twins.start("-c", code, cwd=tmp_path), 120).strip() == "[]"


def test_each_spec_module_imports_only_those_docs_list_above_it() -> None:
    """docs/spec.md's table of modules is their order: a module imports only earlier ones."""
    import ast

    root = Path(__file__).resolve().parent.parent
    docs = (root / "docs" / "spec.md").read_text(encoding="utf-8")
    order = re.findall(r"^\| `graphaudit\.spec\.(\w+)` \|", docs, flags=re.M)
    modules = sorted(p.stem for p in (root / "graphaudit" / "spec").glob("*.py") if p.stem != "__init__")
    assert sorted(order) == modules, "docs/spec.md must list every module of graphaudit/spec/"
    for index, name in enumerate(order):
        tree = ast.parse((root / "graphaudit" / "spec" / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            node.module.rpartition(".")[2]
            for node in tree.body  # module level; under `if TYPE_CHECKING:` is not an import at run time
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graphaudit.spec.")
        }
        assert imported <= set(order[:index]), f"{name} imports {sorted(imported - set(order[:index]))}"
