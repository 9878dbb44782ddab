"""The house rules of the package: the pipeline's layers, no import cycle, small modules, a light import.

Imports are read from the source (``ast``), every one of them: at module level, inside
functions (lazy imports), and under ``TYPE_CHECKING`` for the layering, since a lazy import
is still a dependency. The imports that run, module-level and lazy, must form no cycle;
every import, lazy or not, must follow the pipeline (capture → evidence → checks → runner →
report/draw → cli), and a part of the package with no rule fails (deny by default).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest
import twins

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "graphaudit"
MAX_LINES = 400

# What each part of the package may import from graphaudit (besides itself), bottom to top.
# Deny by default: a part that is not listed fails the test; so does an import not listed.
# Everything may import the foundations, which import only each other.
FOUNDATIONS = {
    "graphaudit.errors",
    "graphaudit.findings",
    "graphaudit.version",
    "graphaudit.suggest",
    "graphaudit.text",
}
_CAPTURED = {"graphaudit.graph", "graphaudit.capture"}
ALLOWED = {
    **{part: set() for part in FOUNDATIONS},
    "graphaudit.graph": set(),
    # the dump format of an original (written where torch runs, without MindSpore; read by capture)
    "graphaudit.reference": set(),
    "graphaudit.draw": {"graphaudit.graph"},
    "graphaudit.capture": {"graphaudit.graph", "graphaudit.reference"},
    # the user's declared design; Spec.from_net reads a captured network
    "graphaudit.spec": _CAPTURED,
    # weight fingerprints: the file format, the hashing (MindSpore) and how ranks differ
    "graphaudit.distributed": _CAPTURED,
    "graphaudit.evidence": _CAPTURED | {"graphaudit.spec", "graphaudit.distributed"},
    "graphaudit.checks": _CAPTURED | {"graphaudit.evidence", "graphaudit.spec", "graphaudit.distributed"},
    # (and the fingerprints graphaudit compare gives GA801: runner/ranks.py)
    "graphaudit.runner": _CAPTURED
    | {
        "graphaudit.evidence",
        "graphaudit.checks",
        "graphaudit.spec",
        "graphaudit.report",
        "graphaudit.distributed",
    },
    "graphaudit.report": _CAPTURED | {"graphaudit.checks", "graphaudit.draw", "graphaudit.distributed"},
    # the training watch drives the whole pipeline from inside a run: it comes after the report
    "graphaudit.watch": _CAPTURED
    | {
        "graphaudit.evidence",
        "graphaudit.checks",
        "graphaudit.runner",
        "graphaudit.report",
        "graphaudit.draw",
        "graphaudit.distributed",
    },
    # the public faces, above the pipeline
    "graphaudit.fingerprint": {"graphaudit.distributed", "graphaudit.checks", "graphaudit.runner"},
    "graphaudit.probe": _CAPTURED | {"graphaudit.evidence", "graphaudit.checks", "graphaudit.runner"},
    "graphaudit.callback": _CAPTURED | {"graphaudit.runner", "graphaudit.report"},
    "graphaudit.testing": _CAPTURED
    | {"graphaudit.checks", "graphaudit.report", "graphaudit.runner", "graphaudit.spec"},
    "graphaudit.pytest_plugin": {"graphaudit.spec", "graphaudit.testing", "graphaudit.runner"},
    "graphaudit.cli": _CAPTURED
    | {
        "graphaudit",
        "graphaudit.checks",
        "graphaudit.distributed",
        "graphaudit.evidence",
        "graphaudit.report",
        "graphaudit.runner",
        "graphaudit.spec",
        "graphaudit.fingerprint",
        "graphaudit.probe",
        "graphaudit.callback",
        "graphaudit.watch",
    },
    "graphaudit.__main__": {"graphaudit.cli"},
    # the package's face imports (lazily) whatever it re-exports
    "graphaudit": {
        "graphaudit.graph",
        "graphaudit.capture",
        "graphaudit.spec",
        "graphaudit.runner",
        "graphaudit.report",
        "graphaudit.callback",
        "graphaudit.watch",
        "graphaudit.probe",
        "graphaudit.testing",
        "graphaudit.fingerprint",
        "graphaudit.checks",
        "graphaudit.evidence",
        "graphaudit.distributed",
        "graphaudit.draw",
    },
}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = modules()


def _resolve(name: str) -> str | None:
    """The graphaudit module an import names (``from graphaudit.graph import node_paths`` -> graphaudit.graph)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that runs: the whole tree except the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def imports(module: str, *, top_level_only: bool = False, typing: bool = True) -> Iterator[str]:
    """The graphaudit modules *module* imports: at module level only, or every import (lazy ones
    inside functions too); *typing* False leaves out those under ``TYPE_CHECKING``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree) if typing else _runtime_nodes(tree))
    for node in nodes:
        if top_level_only and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            names = [f"{base}.{alias.name}" for alias in node.names] or [base]
        for name in names:
            if name.startswith("graphaudit"):
                target = _resolve(name)
                if target is not None and target != module:
                    yield target


def _part(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_imports_form_no_cycle_lazy_ones_included():
    """No cycle among the imports that run, module-level and lazy (a lazy import only hides one)."""
    graph = nx.DiGraph()
    for module in MODULES:
        graph.add_node(module)
        for target in imports(module, typing=False):
            graph.add_edge(module, target)  # a submodule importing its own package's face too
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, cycles


def test_every_part_of_the_package_has_its_rule():
    parts = {_part(module) for module in MODULES}
    assert not parts - set(ALLOWED), (
        f"parts with no import rule (add them to ALLOWED): {sorted(parts - set(ALLOWED))}"
    )


def test_the_parts_are_layered_without_a_cycle():
    layers = nx.DiGraph([(part, target) for part, targets in ALLOWED.items() for target in targets])
    assert nx.is_directed_acyclic_graph(layers), list(nx.simple_cycles(layers))


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_every_import_follows_the_pipeline(part):
    allowed = ALLOWED[part] | FOUNDATIONS | {part}
    wrong = sorted(
        (module, target)
        for module in MODULES
        if _part(module) == part
        for target in imports(module, top_level_only=False)
        if _part(target) not in allowed
    )
    assert not wrong, f"{part} may import only {sorted(allowed)}; these do not: {wrong}"


def test_no_module_is_long():
    long = {
        m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_check_module_imports_another_check_module():
    checks = [m for m in MODULES if m.startswith("graphaudit.checks.ga")]
    wrong = [
        (m, t)
        for m in checks
        for t in imports(m, top_level_only=False)
        if t.startswith("graphaudit.checks.ga")
    ]
    assert not wrong, wrong


def _test_modules_imported(code: str) -> list[str]:
    """The modules named ``test_*`` that *code* imports, at module level or inside a function."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found += [
                alias.name
                for alias in node.names
                if any(part.startswith("test_") for part in alias.name.split("."))
            ]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if any(part.startswith("test_") for part in module.split(".")):
                found.append(module)
            else:  # from tests import test_render
                found += [f"{module}.{alias.name}" for alias in node.names if alias.name.startswith("test_")]
    return found


def test_no_test_module_imports_another():
    """What two test modules share lives in a helper module of tests/ (not named ``test_*``):
    importing a test module ties one file's tests to another's and runs its set-up twice."""
    assert _test_modules_imported("from test_render import EVIL_KEY, big_net\n") == ["test_render"]
    assert _test_modules_imported("def t():\n    from test_audit import _docgen\n") == ["test_audit"]  # lazy
    assert _test_modules_imported("import test_sarif as sarif\nfrom tests import test_render\n") == [
        "test_sarif",
        "tests.test_render",
    ]
    assert not _test_modules_imported(
        "from render_nets import big_net\nfrom graphaudit.testing import audit\n"
    )
    wrong = {
        path.name: found
        for path in sorted((ROOT / "tests").glob("test_*.py"))
        if (found := _test_modules_imported(path.read_text(encoding="utf-8")))
    }
    assert not wrong, (
        f"test modules importing test modules (move what they share to a helper module): {wrong}"
    )


#: Names said once in the package (issue 20, item 5): the module that declares each; a second
#: module assigning one (a copy of FAIL_ON in the watch, say) drifts from it sooner or later.
DECLARED_ONCE = {
    "FAIL_ON": "graphaudit.findings",
    "SEVERITIES": "graphaudit.findings",
    "REQUEST_KEYWORDS": "graphaudit.evidence",
    "REPORT_KEYWORDS": "graphaudit.runner.request",
}


def test_what_is_declared_once_is_assigned_in_one_module():
    assigned: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in DECLARED_ONCE:
                    assigned.setdefault(target.id, []).append(module)
    assert assigned == {name: [module] for name, module in DECLARED_ONCE.items()}


def _imports_mindspore(code: str) -> bool:
    out = twins.finish(twins.start("-c", f"import sys\n{code}\nprint('mindspore' in sys.modules)"), 120)
    return out.strip().splitlines()[-1] == "True"


def test_importing_graphaudit_and_the_declarations_does_not_import_mindspore():
    assert not _imports_mindspore("import graphaudit")
    assert not _imports_mindspore(
        "import graphaudit.checks, graphaudit.evidence, graphaudit.report, graphaudit.draw\n"
        "graphaudit.checks.all_checks(); graphaudit.evidence.all_kinds()"
    )
    assert _imports_mindspore("import graphaudit\ngraphaudit.to_networkx")  # the capture does, on first use


def _walkthrough_modules() -> dict[str, str]:
    """The code blocks of docs/architecture.md's walk-through, by the file their first line names."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(# (graphaudit/[\w/]+\.py)\n.*?)```", text, flags=re.S)
    return {path: code for code, path in blocks}


def _walkthrough_files() -> set[str]:
    """The files named in the first column of the walk-through's table of what a contributor touches."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("| file | what | written by |", 1)[1].split("\n\n", 1)[0]
    return {name for row in table.splitlines()[2:] for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])}


def test_the_walkthrough_check_and_its_evidence_need_nothing_else(tmp_path, capsys):
    """docs/architecture.md's walk-through, run as written: an evidence module and a check module."""
    import importlib
    import sys

    from docgen_module import _docgen
    from mindspore import nn

    import graphaudit
    from graphaudit import checks, evidence
    from graphaudit.cli import main
    from graphaudit.evidence import Evidence

    modules = _walkthrough_modules()
    assert sorted(modules) == [
        "graphaudit/checks/ga799_batchnorm_under_accumulation.py",
        "graphaudit/evidence/accumulation.py",
    ]
    for path, code in modules.items():
        package = tmp_path / path.split("/")[1]
        package.mkdir(exist_ok=True)
        (package / path.split("/")[2]).write_text(code, encoding="utf-8")
    checks.__path__.append(str(tmp_path / "checks"))  # as if the files were in the package
    evidence.__path__.append(str(tmp_path / "evidence"))
    net = nn.SequentialCell([nn.Dense(4, 4), nn.BatchNorm1d(4)])
    try:
        assert "GA799" in checks.all_checks()  # found by the package's own module scan
        kind = importlib.import_module("graphaudit.evidence.accumulation").AccumulationSteps
        assert kind in evidence.all_kinds()

        without = graphaudit.audit(net)
        assert without.skipped["GA799"].endswith("pass accumulation_steps=N")
        assert "give --accumulation-steps N" in next(
            n.text("cli") for n in without.not_run if n.check_id == "GA799"
        )
        report = graphaudit.audit(net, accumulation_steps=4)
        [finding] = report.by_check("GA799")
        assert finding.severity == "warning" and finding.subjects == ("1",) and "GA799" in report.checks_run
        assert not graphaudit.audit(net, accumulation_steps=1).by_check("GA799")
        with pytest.raises(
            graphaudit.errors.ArgumentError, match="accumulation_steps= takes a whole number >= 1"
        ):
            graphaudit.audit(net, accumulation_steps=0)  # parsed by its declaration, at the door
        with pytest.raises(TypeError, match="did you mean 'accumulation_steps'"):
            graphaudit.audit(net, acumulation_steps=4)

        factory = tmp_path / "model.py"
        factory.write_text(
            "from mindspore import nn\n\ndef build():\n    return nn.SequentialCell([nn.Dense(4, 4), nn.BatchNorm1d(4)])\n"
        )
        assert main(["audit", f"{factory}:build", "--accumulation-steps", "4", "--fail-on", "warning"]) == 1
        assert "GA799 batchnorm-under-accumulation" in capsys.readouterr().out
        assert main(["checks", "GA799"]) == 0
        assert "Use instead" in capsys.readouterr().out

        # The generated files the new check and its flag change are in the walk-through's table.
        docgen = _docgen()
        checks_doc, cli_doc = (
            path.read_text(encoding="utf-8") for path in (docgen.DOC_PATH, docgen.CLI_DOC_PATH)
        )
        regenerated = docgen.checks_markdown()
        assert "GA799" in regenerated and "GA799" not in checks_doc
        # the flag's row is among checks.md's evidence options; cli.md's tables do not change
        assert "| `accumulation_steps=` | `--accumulation-steps N` |" in regenerated
        assert docgen.cli_markdown(cli_doc) == cli_doc
        # a sample carries its own facts (SARIF line, slowness): no test file is in the table
        files = _walkthrough_files()
        assert files == {
            "graphaudit/evidence/accumulation.py",
            "graphaudit/checks/ga7NN_batchnorm_under_accumulation.py",
            "samples/GA7NN/bad.py",
            "samples/GA7NN/good.py",
            "samples/GA7NN/bad.expected",
            str(docgen.DOC_PATH.relative_to(ROOT)),
        }
        assert len(files) <= 6  # issue 39's target: a new check with a new evidence kind touches at most six
        assert finding.cause.fields() == {"kind": "NormalisedOverMicroBatch", "paths": ["1"], "steps": 4}
        assert finding.message.startswith("1 BatchNorm cell (1) normalises over one micro-batch of the 4")
    finally:
        checks.__path__.remove(str(tmp_path / "checks"))
        evidence.__path__.remove(str(tmp_path / "evidence"))
        checks._REGISTRY.pop("GA799", None)
        for key in [k for k in Evidence._registry if k.startswith("graphaudit.evidence.accumulation.")]:
            Evidence._registry.pop(key)
        for name in (
            "graphaudit.checks.ga799_batchnorm_under_accumulation",
            "graphaudit.evidence.accumulation",
        ):
            sys.modules.pop(name, None)
    assert "GA799" not in checks.all_checks()


def test_a_check_id_used_by_two_modules_fails_at_import():
    from graphaudit import checks

    def imposter(ctx):
        """x. What it does: x. Why is this bad: x. Example: x. Use instead: x."""
        return iter(())

    imposter.__module__ = "somewhere.else"
    real = checks.all_checks()["GA101"]  # every check module imported first, whatever ran before
    try:
        with pytest.raises(ValueError, match="GA101 is used twice"):
            checks.register("GA101", "another-name", severity="error")(imposter)
    finally:
        checks._REGISTRY["GA101"] = real  # never leave the stand-in registered
    assert checks.all_checks()["GA101"].name == "repeated-cell-in-container"
