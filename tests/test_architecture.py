"""The house rules of the package: the pipeline's layers, no import cycle, small modules, a light import.

Imports are read from the source (``ast``), every one of them: at module level, inside
functions (lazy imports), and under ``TYPE_CHECKING`` for the layering, since a lazy import
is still a dependency. Module-level imports must form no cycle; and every import, lazy or
not, must follow the pipeline: capture → evidence → checks → runner → report/draw → cli.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "graphaudit"
MAX_LINES = 400

# What each part of the package may import from graphaudit (besides itself). Everything
# may import the foundations.
FOUNDATIONS = {"graphaudit.errors", "graphaudit.findings", "graphaudit.version", "graphaudit.suggest"}
ALLOWED = {
    "graphaudit.graph": {"graphaudit.graph"},
    "graphaudit.draw": {"graphaudit.graph"},
    "graphaudit.spec": {"graphaudit.graph", "graphaudit.capture"},
    "graphaudit.fingerprint": {"graphaudit.capture", "graphaudit.checks"},
    "graphaudit.capture": {"graphaudit.graph", "graphaudit.fingerprint"},
    "graphaudit.evidence": {
        "graphaudit.graph",
        "graphaudit.capture",
        "graphaudit.spec",
        "graphaudit.fingerprint",
    },
    "graphaudit.checks": {
        "graphaudit.graph",
        "graphaudit.capture",
        "graphaudit.evidence",
        "graphaudit.spec",
        "graphaudit.fingerprint",
    },
    "graphaudit.runner": {
        "graphaudit.graph",
        "graphaudit.capture",
        "graphaudit.evidence",
        "graphaudit.checks",
        "graphaudit.spec",
        "graphaudit.report",
    },
    "graphaudit.report": {
        "graphaudit.graph",
        "graphaudit.capture",
        "graphaudit.checks",
        "graphaudit.draw",
        "graphaudit.fingerprint",
    },
    # the training watch drives the whole pipeline from inside a run: it comes after the report
    "graphaudit.watch": {
        "graphaudit.graph",
        "graphaudit.capture",
        "graphaudit.evidence",
        "graphaudit.checks",
        "graphaudit.runner",
        "graphaudit.report",
        "graphaudit.draw",
        "graphaudit.fingerprint",
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


def imports(module: str, *, top_level_only: bool) -> Iterator[str]:
    """The graphaudit modules *module* imports."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
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


def test_module_level_imports_form_no_cycle():
    graph = nx.DiGraph()
    for module in MODULES:
        graph.add_node(module)
        for target in imports(module, top_level_only=True):
            if not module.startswith(target + "."):  # a submodule importing its own package's face
                graph.add_edge(module, target)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, cycles


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


def _imports_mindspore(code: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint('mindspore' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1] == "True"


def test_importing_graphaudit_and_the_declarations_does_not_import_mindspore():
    assert not _imports_mindspore("import graphaudit")
    assert not _imports_mindspore(
        "import graphaudit.checks, graphaudit.evidence, graphaudit.report, graphaudit.draw\n"
        "graphaudit.checks.all_checks(); graphaudit.evidence.all_kinds()"
    )
    assert _imports_mindspore("import graphaudit\ngraphaudit.to_networkx")  # the capture does, on first use


def test_a_check_with_a_new_kind_of_evidence_needs_nothing_else():
    """docs/architecture.md's walk-through: an evidence module and a check module, nothing else."""
    from dataclasses import dataclass

    from mindspore import nn

    import graphaudit
    from graphaudit import checks
    from graphaudit.evidence import Evidence, Missing, Option, Requirement

    @dataclass(frozen=True)
    class BatchSizeHint(Evidence):
        title = "the batch size the training will use"
        requirement = Requirement("pass batch_size=N", "give --batch-size N")
        options = (Option("batch_size", "the training batch size", flag="--batch-size"),)

        size: int

        @classmethod
        def produce(cls, request, have):
            size = request.option("batch_size")
            return Missing() if size is None else cls(int(size))

    def batch_of_one(ctx):
        """A training batch of one sample.

        What it does: reports a batch size of 1. Why is this bad: BatchNorm cannot normalise
        one sample. Example: ``batch_size=1``. Use instead: ``batch_size=32``.
        """
        if ctx.need(BatchSizeHint).size == 1:
            yield ctx.finding("warning", "(root)", "The batch holds one sample.", "Use more.", ["cell:"])

    batch_of_one.__module__ = "graphaudit.checks.ga099_walkthrough"  # as if it lived in the package
    try:
        checks.register("GA999", "walkthrough-batch-of-one", severity="warning", needs=(BatchSizeHint,))(
            batch_of_one
        )
        without = graphaudit.audit(nn.Dense(2, 2))
        assert "GA999" in without.skipped and "pass batch_size=N" in without.skipped["GA999"]
        assert "give --batch-size N" in next(n.text("cli") for n in without.not_run if n.check_id == "GA999")
        report = graphaudit.audit(nn.Dense(2, 2), batch_size=1)
        assert [f.check_id for f in report.findings] == ["GA999"] and "GA999" in report.checks_run
        with pytest.raises(TypeError, match="did you mean 'batch_size'"):
            graphaudit.audit(nn.Dense(2, 2), batch_sise=1)
    finally:
        checks._REGISTRY.pop("GA999", None)
        Evidence._registry.pop(f"{BatchSizeHint.__module__}.{BatchSizeHint.__qualname__}", None)


def test_a_check_id_used_by_two_modules_fails_at_import():
    from graphaudit import checks

    def imposter(ctx):
        """x. What it does: x. Why is this bad: x. Example: x. Use instead: x."""
        return iter(())

    imposter.__module__ = "somewhere.else"
    with pytest.raises(ValueError, match="GA101 is used twice"):
        checks.register("GA101", "another-name", severity="error")(imposter)
    assert checks.all_checks()["GA101"].name == "repeated-cell-in-container"
