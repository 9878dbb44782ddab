"""graphaudit.testing (assert_clean, assert_matches_spec, assert_matches_snapshot), the pytest plugin (design_snapshot), and that loading them stays light."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import twins
from mindspore import Parameter, Tensor, nn

import graphaudit
from graphaudit.errors import GraphAuditError, SpecError
from graphaudit.spec import Spec
from graphaudit.testing import assert_clean, assert_matches_snapshot, assert_matches_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from nets import Repeated, Tied

pytest_plugins = ["pytester"]

X = Tensor(np.ones((2, 4), np.float32))
IDS = Tensor(np.array([[1, 2, 3]], np.int32))


class Chain(nn.Cell):
    """stem -> body -> head, with optional drifts: a skip connection, body applied twice."""

    def __init__(self, skip: bool = False, twice: bool = False) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 4)
        self.body = nn.Dense(4, 4)
        self.head = nn.Dense(4, 2)
        self.skip = skip
        self.twice = twice

    def construct(self, x: Tensor) -> Tensor:
        h = self.stem(x)
        y = self.body(h)
        if self.twice:
            y = self.body(y)
        if self.skip:
            y = y + h
        return self.head(y)


class Untied(Tied):
    """Tied, with the tie broken: the decoder got its own copy of the table."""

    def __init__(self) -> None:
        super().__init__()
        self.decoder.weight = Parameter(self.embed.embedding_table.value().copy(), name="decoder.weight")


class Backbone(nn.Cell):
    def __init__(self, freeze: bool = True) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 8)])
        self.head = nn.Dense(8, 2)
        for param in self.backbone.get_parameters():
            param.requires_grad = not freeze

    def construct(self, x: Tensor) -> Tensor:
        return self.head(self.backbone(x))


def failure(net: nn.Cell, spec: Spec | Path, inputs: Tensor | None) -> str:
    with pytest.raises(AssertionError) as info:
        assert_matches_spec(net, spec, inputs=inputs)
    return str(info.value)


# ----------------------------------------------------------------------------- assert_clean


def test_assert_clean_passes_and_returns_the_report() -> None:
    net = nn.Dense(3, 2)
    report = assert_clean(net, nn.SGD(net.trainable_params()))
    assert isinstance(report, graphaudit.Report) and report.ok


def test_assert_clean_lists_each_finding_not_allowed() -> None:
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    optimizer = nn.SGD(net[0].trainable_params())
    with pytest.raises(AssertionError) as info:
        assert_clean(net, optimizer)
    message = str(info.value)
    assert "GA201 trainable-not-in-optimizer [error] 1\n" in message and "(1.weight and 1.bias)" in message
    assert "fix: " in message
    assert "allow=[" in message


@pytest.mark.parametrize(
    "allow",
    [["GA201"], ["trainable-not-in-optimizer"], ["GA201:1.*"], ("GA201:1.weight", "GA201:1.bias"), "GA201"],
)
def test_assert_clean_allow_forms(allow: object) -> None:
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    report = assert_clean(net, nn.SGD(net[0].trainable_params()), allow=allow)
    assert not report.ok  # allowing does not change the report, only the assertion


def test_assert_clean_allow_that_does_not_match_still_fails() -> None:
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    with pytest.raises(AssertionError, match=r"1\.bias") as info:
        assert_clean(net, nn.SGD(net[0].trainable_params()), allow=["GA201:1.weight", "GA101"])
    assert "not allowed: 1.bias\n" in str(info.value)  # the allowed subject is not listed as failing


def test_assert_clean_accepts_a_report_and_audit_keywords() -> None:
    report = graphaudit.audit(nn.SequentialCell([nn.Dense(4, 4)] * 2))
    with pytest.raises(AssertionError, match="GA101 repeated-cell-in-container"):
        assert_clean(report)
    assert_clean(report, allow=["repeated-cell-in-container"])
    net = nn.SequentialCell([nn.Dense(4, 4)] * 2)
    assert_clean(net, spec=Spec(shared_cells=[["0", "1"]]), inputs=X, allow=["GA102"])
    with pytest.raises(GraphAuditError, match="either a Report"):
        assert_clean(report, nn.SGD(nn.Dense(2, 2).trainable_params()))


def test_assert_clean_rejects_unknown_allow_entries() -> None:
    net = nn.Dense(3, 2)
    with pytest.raises(GraphAuditError, match="did you mean 'GA201'"):
        assert_clean(net, allow=["GA2O1"])
    with pytest.raises(GraphAuditError, match="did you mean 'repeated-cell-in-container'"):
        assert_clean(net, allow=["repeated-cell-in-contaner"])
    with pytest.raises(GraphAuditError, match="unbalanced"):
        assert_clean(net, allow=["GA201:head[0"])


# ----------------------------------------------------------------------------- assert_matches_spec


@pytest.mark.parametrize(
    ("make", "inputs"),
    [
        (Tied, IDS),
        (Repeated, X),
        (Backbone, X),
        (Chain, X),
        (lambda: nn.SequentialCell([nn.Dense(4, 4)] * 3), X),
    ],
)
def test_same_net_matches_its_snapshot(make: object, inputs: Tensor, tmp_path: Path) -> None:
    spec = Spec.from_net(make(), inputs)
    assert_matches_spec(make(), spec, inputs=inputs)
    spec.save(tmp_path / "design.toml")
    assert_matches_spec(make(), tmp_path / "design.toml", inputs=inputs)
    assert_matches_spec(make(), str(tmp_path / "design.toml"), inputs=inputs)


def test_extra_connection_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "chain.toml"
    Spec.from_net(Chain(), X).save(path)
    message = failure(Chain(skip=True), path, X)
    assert f"Chain does not match its design spec ({path}): 1 difference\n" in message
    assert (
        "  - connections: stem -> head is in the network, but the spec does not declare it "
        "(its connections are exhaustive)" in message
    )
    assert "--graphaudit-update-snapshots" in message


def test_different_call_count_is_reported() -> None:
    message = failure(Chain(twice=True), Spec.from_net(Chain(), X), X)
    assert "  - calls: 'body' is called 2 times in one forward pass, but the spec says 1" in message


def test_broken_tie_is_reported() -> None:
    message = failure(Untied(), Spec.from_net(Tied(), IDS), IDS)
    assert (
        "shared parameters: ['embed.embedding_table', 'decoder.weight'] are declared shared, but in the "
        "network they are separate objects (the tie is broken)" in message
    )
    message = failure(Tied(), Spec.from_net(Untied(), IDS), IDS)
    assert "are shared in the network, but the spec does not declare it" in message


def test_unfrozen_and_newly_frozen_parameters_are_reported() -> None:
    message = failure(Backbone(freeze=False), Spec.from_net(Backbone(), X), X)
    assert (
        "frozen: 'backbone.0.weight' is trainable (requires_grad=True), but the spec declares it frozen"
        in message
    )
    net = Backbone()
    net.head.weight.requires_grad = False
    message = failure(net, Spec.from_net(Backbone(), X), X)
    assert (
        "frozen: 'head.weight' is frozen (requires_grad=False), but the spec does not declare it frozen"
        in message
    )


def test_unshared_repeated_block_is_reported() -> None:
    spec = Spec.from_net(nn.SequentialCell([nn.Dense(4, 4)] * 3), X)
    message = failure(nn.SequentialCell([nn.Dense(4, 4) for _ in range(3)]), spec, X)
    assert (
        "shared cells: ['0', '1', '2'] are declared shared, but in the network they are separate objects"
        in message
    )
    assert "calls: '0' is called 1 time in one forward pass, but the spec says 3" in message


def test_hand_written_spec_with_globs() -> None:
    spec = Spec(
        shared_cells=[["layers.*"]],
        expected_connections=[("embed", "decoder")],
        calls={"layers.1": 3},
    )
    assert_matches_spec(Repeated(), Spec(shared_cells=[["layers.*"]], calls={"layers.1": 3}), inputs=X)
    assert_matches_spec(Tied(), Spec(shared_parameters=[["*.embedding_table", "decoder.*"]]), inputs=IDS)
    message = failure(Tied(), spec, IDS)
    assert "shared cells: ['layers.*'] are declared shared, but in the network they are separate" in message
    assert "calls: no cell of the network matches 'layers.1'" in message


def test_deeper_connections_of_a_hand_written_spec() -> None:
    spec = Spec(
        frozen=["backbone.*"],
        expected_connections=[
            ("backbone.0", "backbone.1"),
            ("backbone.1", "backbone.2"),
            ("backbone.2", "head"),
        ],
        forbidden_connections=[("backbone.0", "head")],
        exhaustive_connections=True,
    )
    assert_matches_spec(Backbone(), spec, inputs=X)
    drifted = Spec(
        expected_connections=[("backbone.0", "backbone.2")],
        forbidden_connections=[("backbone.1", "*")],
        exhaustive_connections=True,
    )
    message = failure(Backbone(freeze=False), drifted, X)
    assert (
        "connections: backbone.0 -> backbone.2 is expected, but the network has no such connection" in message
    )
    assert (
        "connections: backbone.1 -> backbone.2 is in the network, but the spec forbids it (matches" in message
    )
    assert "does not declare it (its connections are exhaustive)" not in message  # forbidden: said once


def test_assert_matches_spec_needs_inputs_for_a_traced_design(tmp_path: Path) -> None:
    with pytest.raises(GraphAuditError, match="pass inputs="):
        assert_matches_spec(Chain(), Spec.from_net(Chain(), X))
    assert_matches_spec(Tied(), Spec.from_net(Tied()))  # structure only: no inputs needed
    bad = tmp_path / "bad.toml"
    bad.write_text("[calls]\nbody = -2\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"bad\.toml:2: "):
        assert_matches_spec(Chain(), bad, inputs=X)


# ----------------------------------------------------------------------------- pytest plugin


def test_the_plugin_is_declared_as_a_pytest11_entry_point() -> None:
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["pytest11"] == {"graphaudit": "graphaudit.pytest_plugin"}


INNER = """
import numpy as np
from mindspore import Tensor, nn


class Chain(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stem = nn.Dense(4, 4)
        self.body = nn.Dense(4, 4)
        self.head = nn.Dense(4, 2)

    def construct(self, x):
        return self.head(self.body({body_input}))


def test_design(design_snapshot):
    spec = design_snapshot(Chain(), "designs/chain.toml", inputs=Tensor(np.ones((2, 4), np.float32)))
    assert spec.calls
"""


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # load only the plugin under test
    return pytester


def run(pytester: pytest.Pytester, body_input: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_inner=textwrap.dedent(INNER).replace("{body_input}", body_input))
    return pytester.runpytest("-p", "graphaudit.pytest_plugin", *args)


def test_design_snapshot_writes_then_compares_then_updates(inner: pytest.Pytester) -> None:
    snapshot = inner.path / "designs" / "chain.toml"

    first = run(inner, "self.stem(x)")  # no file yet: written, the test passes
    first.assert_outcomes(passed=1)
    assert snapshot.exists()
    written = Spec.load(snapshot)
    assert written.expected_connections == [("body", "head"), ("stem", "body")]
    assert written.calls == {"stem": 1, "body": 1, "head": 1}

    run(inner, "self.stem(x)").assert_outcomes(passed=1)  # unchanged: matches

    drifted = run(inner, "self.stem(x) + self.stem(x)")  # stem now called twice
    drifted.assert_outcomes(failed=1)
    drifted.stdout.fnmatch_lines(
        [
            "*Chain does not match its design spec*chain.toml*1 difference*",
            "*- calls: 'stem' is called 2 times in one forward pass, but the spec says 1*",
        ]
    )
    assert Spec.load(snapshot) == written  # a failing comparison leaves the file alone

    updated = run(inner, "self.stem(x) + self.stem(x)", "--graphaudit-update-snapshots")
    updated.assert_outcomes(passed=1)
    assert Spec.load(snapshot).calls["stem"] == 2

    run(inner, "self.stem(x) + self.stem(x)").assert_outcomes(passed=1)


def test_design_snapshot_option_is_in_the_help(inner: pytest.Pytester) -> None:
    result = inner.runpytest("-p", "graphaudit.pytest_plugin", "--help")
    result.stdout.fnmatch_lines(["*--graphaudit-update-snapshots*"])


def test_design_snapshot_reports_a_malformed_snapshot_file(inner: pytest.Pytester) -> None:
    (inner.path / "designs").mkdir()
    (inner.path / "designs" / "chain.toml").write_text("[calls]\n'stem' = 'once'\n", encoding="utf-8")
    result = run(inner, "self.stem(x)")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*SpecError*chain.toml:2: the call count of 'stem' must be a non-negative integer*"]
    )


# ----------------------------------------------------------------------------- assert_matches_snapshot


def test_assert_matches_snapshot_writes_then_compares_then_updates(tmp_path: Path) -> None:
    path = tmp_path / "designs" / "chain.toml"
    written = assert_matches_snapshot(Chain(), path, inputs=X)  # no file yet: written
    assert path.exists()
    assert written.source == str(path)
    assert Spec.load(path) == written
    assert written.calls == {"stem": 1, "body": 1, "head": 1}

    assert assert_matches_snapshot(Chain(), path, inputs=X) == written  # unchanged: matches
    with pytest.raises(AssertionError, match="'body' is called 2 times in one forward pass"):
        assert_matches_snapshot(Chain(twice=True), path, inputs=X)
    assert Spec.load(path) == written  # a failing comparison leaves the file alone

    updated = assert_matches_snapshot(Chain(twice=True), path, inputs=X, update=True)
    assert updated.calls["body"] == 2
    assert Spec.load(path) == updated
    assert_matches_snapshot(Chain(twice=True), str(path), inputs=X)


def test_assert_matches_snapshot_depth_reaches_the_file(tmp_path: Path) -> None:
    spec = assert_matches_snapshot(Backbone(), tmp_path / "b.toml", inputs=X, depth=2)
    assert ("backbone.0", "backbone.1") in spec.expected_connections
    assert ("backbone.0", "backbone.1") in Spec.load(tmp_path / "b.toml").expected_connections
    with pytest.raises(SpecError, match="depth >= 1"):
        assert_matches_snapshot(Backbone(), tmp_path / "c.toml", inputs=X, depth=0)
    assert not (tmp_path / "c.toml").exists()


# ----------------------------------------------------------------------------- loading stays light


def python_says(code: str, cwd: Path) -> str:
    return twins.finish(twins.start("-c", code, cwd=cwd), 120).strip()


def test_the_plugin_testing_and_spec_load_without_mindspore(tmp_path: Path) -> None:
    code = "import sys, graphaudit.pytest_plugin, graphaudit.testing, graphaudit.spec; print('mindspore' in sys.modules)"
    assert python_says(code, tmp_path) == "False"
    # ...and the first use does import it: the check above can see MindSpore when it is there
    used = "import sys, graphaudit.spec, mindspore.nn as nn; graphaudit.spec.Spec.from_net(nn.Dense(2, 2))"
    assert python_says(f"{used}; print('mindspore' in sys.modules)", tmp_path) == "True"


SESSION_CONFTEST = """
import sys


def pytest_sessionfinish(session):
    option = session.config.getoption("--graphaudit-update-snapshots")  # raises if the plugin is not loaded
    with open("loaded.txt", "w", encoding="utf-8") as file:
        file.write(f"plugin={'graphaudit.pytest_plugin' in sys.modules} option={option} "
                   f"mindspore={'mindspore' in sys.modules}")
"""


def _entry_point_installed() -> bool:
    from importlib.metadata import entry_points

    return any(e.value == "graphaudit.pytest_plugin" for e in entry_points(group="pytest11"))


@pytest.mark.parametrize("how", ["entry point", "-p"])
def test_a_pytest_session_with_the_plugin_does_not_import_mindspore(tmp_path: Path, how: str) -> None:
    if how == "entry point" and not _entry_point_installed():
        pytest.skip("graphaudit is not installed: its pytest11 entry point is not registered")
    (tmp_path / "conftest.py").write_text(textwrap.dedent(SESSION_CONFTEST), encoding="utf-8")
    env = twins.environment(**{k: None for k in os.environ if k.startswith("PYTEST_")})
    args = ["-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"]
    if how == "-p":
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        args += ["-p", "graphaudit.pytest_plugin"]
    done = twins.run(*args, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout + done.stderr
    assert (tmp_path / "loaded.txt").read_text(encoding="utf-8") == "plugin=True option=False mindspore=False"
