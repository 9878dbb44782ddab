"""Where a finding comes from in the user's code: the source line behind each SARIF result.

A finding names cells and parameters by their attribute paths (``body.0``, ``head.weight``).
:class:`Locator` turns a path into the line that creates the object, read with
:mod:`inspect` and :mod:`ast` from the classes of the report's network
(``Report.structure``): walking up the path, the first class outside MindSpore that assigns
the attribute (``self.head = nn.Dense(...)``, ``self.w = Parameter(...)``; an item of a
``SequentialCell`` is found at the line that builds the container). A finding about what a
cell computes (an activation, a head: its ``call:`` nodes) points at the line that creates
that cell, so GA401 points at the ``Dense(..., activation="sigmoid")`` and not at the loss.
The rest point at the factory's line that creates the thing: findings about the optimizer
(or naming its class) at its call of the optimizer's class, findings about the loss at the
call of the loss's class, a data-pipeline step (``train/shuffle#1``) at the call that adds
it, and a finding about the whole network, or an item of a MindSpore container at the
root, at the call that builds the network. :class:`Sources` parses each file once.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit.checks import Check
from graphaudit.findings import Finding
from graphaudit.graph import CELL, PARAMETER, cell_nodes_by_path, node_paths, nodes_of_kind
from graphaudit.report import Report

__all__ = ["Locator", "Site", "Sources", "about_optimizer"]

_INDEX = re.compile(r"\[[^\]]*\]")
_CLASS = re.compile(r"^[A-Z]\w*$")  # a subject that is a class name: "BCEWithLogitsLoss"
_STEP = re.compile(r"^[^/:]+/(\w+)#(\d+)")  # a data-pipeline step: "train/shuffle#1"


@dataclass(frozen=True)
class Site:
    """A line of a source file."""

    file: str
    line: int


def _first_line(node: ast.AST) -> int:
    """The line ``inspect.getsourcelines`` starts a definition at: its first decorator's, or its own."""
    decorators = getattr(node, "decorator_list", [])
    return min([d.lineno for d in decorators] + [node.lineno])  # type: ignore[attr-defined]


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        found = [node.target]
    else:
        return []
    flat: list[ast.expr] = []
    while found:
        target = found.pop(0)
        if isinstance(target, (ast.Tuple, ast.List)):
            found.extend(target.elts)
        else:
            flat.append(target)
    return flat


def _anchors(obj: Any) -> Iterator[tuple[str, int, bool]]:
    """``(file, line, inside)``: where *obj* is defined (*inside*: a line within a class's body).

    A class's methods know their file and line even when its module is not in ``sys.modules``
    (a file imported by path), where :func:`inspect.getsourcefile` cannot find it.
    """
    from graphaudit.capture.compilation.jit import python_function

    obj = python_function(obj)  # a @jit function: where the user wrote it
    code = getattr(obj, "__code__", None)
    if code is not None:
        yield code.co_filename, code.co_firstlineno, False
        return
    if isinstance(obj, type):
        for member in vars(obj).values():
            function = python_function(getattr(member, "__func__", getattr(member, "fget", member)))
            method = getattr(function, "__code__", None)
            if method is not None and getattr(function, "__qualname__", "").startswith(
                obj.__qualname__ + "."
            ):
                yield method.co_filename, method.co_firstlineno, True
                break
    try:
        file = inspect.getsourcefile(obj)
        line = inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return
    if file:
        yield file, line, False


class Sources:
    """The source of classes and factories, each file parsed once: who assigns what, who calls what."""

    def __init__(self) -> None:
        self._trees: dict[str, ast.Module | None] = {}
        self._sites: dict[type, dict[str, Site]] = {}

    def _tree(self, file: str) -> ast.Module | None:
        if file not in self._trees:
            try:
                self._trees[file] = ast.parse("".join(linecache.getlines(file)) or "\n", file)
            except (SyntaxError, ValueError):
                self._trees[file] = None
        return self._trees[file]

    def definition(self, obj: Any) -> tuple[str, ast.AST] | None:
        """The file defining the class or function *obj*, and its ``ast`` node."""
        name = getattr(obj, "__name__", None)
        kinds = (ast.ClassDef,) if isinstance(obj, type) else (ast.FunctionDef, ast.AsyncFunctionDef)
        for file, line, inside in _anchors(obj):
            tree = self._tree(file)
            for node in ast.walk(tree) if tree is not None else ():
                if not isinstance(node, kinds) or node.name != name:
                    continue
                if (inside and node.lineno <= line <= (node.end_lineno or node.lineno)) or _first_line(
                    node
                ) == line:
                    return file, node
        return None

    def _attribute_sites(self, cls: type) -> dict[str, Site]:
        """``self.NAME = ...`` in the methods of *cls* (``__init__`` first): the line for each NAME."""
        if cls in self._sites:
            return self._sites[cls]
        sites: dict[str, Site] = {}
        found = self.definition(cls)
        if found is not None and isinstance(found[1], ast.ClassDef):
            file, node = found
            methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            methods.sort(key=lambda m: m.name != "__init__")  # stable: then in source order
            for method in methods:
                arguments = [*method.args.posonlyargs, *method.args.args]
                if not arguments:
                    continue
                me = arguments[0].arg
                assigned = []
                for statement in ast.walk(method):
                    value = getattr(statement, "value", None)
                    placeholder = isinstance(value, ast.Constant) and value.value is None
                    for target in _targets(statement):
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == me
                        ):
                            assigned.append((placeholder, statement.lineno, target.attr))
                for _, line, name in sorted(assigned):  # a real value before `self.x = None`
                    sites.setdefault(name, Site(file, line))
        self._sites[cls] = sites
        return sites

    def assignment(self, cls: type, name: str) -> Site | None:
        """The line that assigns ``self.<name>`` in *cls* or the first base (outside MindSpore) that does."""
        for klass in cls.__mro__:
            if klass.__module__ == "builtins" or klass.__module__.partition(".")[0] == "mindspore":
                continue
            site = self._attribute_sites(klass).get(name)
            if site is not None:
                return site
        return None

    def call_site(self, factory: Any, name: str, nth: int = 1) -> Site | None:
        """The line of *factory*'s source with its *nth* call of something called *name* (``nn.Momentum(...)``)."""
        found = self.definition(factory)
        if found is None:
            return None
        file, node = found
        lines = sorted(
            {
                call.lineno
                for call in ast.walk(node)
                if isinstance(call, ast.Call)
                and (
                    (isinstance(call.func, ast.Name) and call.func.id == name)
                    or (isinstance(call.func, ast.Attribute) and call.func.attr == name)
                )
            }
        )
        return Site(file, lines[nth - 1]) if len(lines) >= nth else None

    def calls_after(self, factory: Any, name: str, line: int, nth: int = 1) -> Site | None:
        """*factory*'s *nth* call of *name* at or after *line* (a step chained on a pipeline built there)."""
        k = 1
        site = self.call_site(factory, name, k)
        while site is not None and site.line < line:
            k += 1
            site = self.call_site(factory, name, k)
        return self.call_site(factory, name, k + nth - 1) if site is not None else None

    def net_site(self, factory: Any) -> Site | None:
        """The line that creates what *factory* returns as ``"net"``: the call, or the variable's assignment."""
        found = self.definition(factory)
        value = _returned_net(found[1]) if found is not None else None
        if found is None or value is None:
            return None
        if isinstance(value, ast.Name):
            name = value.id
            lines = [
                statement.lineno
                for statement in ast.walk(found[1])
                if any(isinstance(t, ast.Name) and t.id == name for t in _targets(statement))
            ]
            return Site(found[0], min(lines)) if lines else None
        return Site(found[0], value.lineno)


def _returned_net(node: ast.AST) -> ast.AST | None:
    """In a factory's body, the expression it returns as ``"net"`` (``{"net": net, ...}``)."""
    for found in ast.walk(node):
        if isinstance(found, ast.Dict):
            for key, value in zip(found.keys, found.values):
                if isinstance(key, ast.Constant) and key.value == "net":
                    return value
    return None


def about_optimizer(check: Check | None) -> bool:
    """Whether *check*'s findings are about the optimizer: what it holds (GA2xx), its learning rates (GA914-916).

    Example:
        >>> from graphaudit.checks import all_checks
        >>> checks = all_checks()
        >>> [about_optimizer(checks[i]) for i in ("GA201", "GA204", "GA101", "GA914")]
        [True, False, False, True]
    """
    if check is None:
        return False
    needs = {k.__name__ for k in check.needs}
    if "DeclaredDesign" in needs:  # about parameters the design names (GA205): where they are built
        return False
    return (check.check_id[2] == "2" and "OptimizerView" in needs) or "LearningRates" in needs  # its schedule


class Locator:
    """The source line behind each finding of one report (see the module docstring)."""

    def __init__(
        self,
        report: Report,
        sources: Sources,
        optimizer_site: Site | None,
        factories: tuple[Any, ...] = (),
        optimizer: str | None = None,
    ) -> None:
        self.report = report
        self.sources = sources
        self.optimizer_site = optimizer_site
        self.factories = factories
        self.optimizer = optimizer  # the optimizer's class name
        graph = report.graph
        self.cells = cell_nodes_by_path(graph) if report.structure is not None else {}
        self.parameter_paths: dict[str, list[str]] = {}  # name and every path -> attribute paths
        for node, attrs in nodes_of_kind(graph, PARAMETER):
            paths = node_paths(graph, node) if "paths" in attrs else []
            for key in (attrs["name"], *paths):
                self.parameter_paths.setdefault(key, paths)

    def _paths(self, finding: Finding) -> list[str]:
        graph = self.report.graph
        paths: list[str] = []
        for subject in (finding.subject, *finding.subjects):
            if subject in self.cells:
                paths.append(subject)
            paths.extend(self.parameter_paths.get(subject, [])[:1])
            if "[" in subject:  # a cell kept in a plain list or dict (GA303): the attribute holding it
                paths.append(_INDEX.sub("", subject))
        for node in finding.nodes:
            attrs = graph.nodes[node] if node in graph else {}
            if attrs.get("kind") in (CELL, PARAMETER) and "paths" in attrs:
                paths.extend(node_paths(graph, node)[:1])
        calls = [
            graph.nodes[n].get("path")
            for n in finding.nodes
            if n in graph and graph.nodes[n].get("kind") == "call"
        ]
        paths.extend(calls)  # what a cell computes (GA401's sigmoid, about the loss): that cell
        return list(dict.fromkeys(p for p in paths if p))

    def _called(self, name: str, nth: int = 1) -> Site | None:
        """The factories' *nth* call of *name*: the line that creates a loss, a pipeline step, the network."""
        return next(
            (s for f in self.factories if (s := self.sources.call_site(f, name, nth)) is not None), None
        )

    def _source(self, subject: str) -> re.Match[str] | None:
        """For a pipeline (``train``), one of its columns (``train:label``) or steps, its source: the
        *n*-th call of its class (``ImageFolderDataset``), counting the pipelines built from that class."""
        name = subject.partition(":")[0].partition("/")[0]
        first: dict[str, str] = {}
        for pipeline, graph in self.report.datasets.items():
            sources = sorted(
                str(a.get("op", "")) for _, a in graph.nodes(data=True) if a.get("kind") == "source"
            )
            if sources:
                first[pipeline] = sources[0]
        if name not in first:
            return None
        nth = [p for p in first if first[p] == first[name]].index(name) + 1
        return _STEP.match(f"{name}/{first[name]}#{nth}")

    def _root_site(self) -> Site | None:
        structure = self.report.structure
        root = structure.cells.get(self.cells.get("")) if structure is not None and "" in self.cells else None
        site = self._called(type(root).__name__) if root is not None else None
        if site is None:  # built by a helper the factory calls: the line that makes what it returns
            site = next((s for f in self.factories if (s := self.sources.net_site(f)) is not None), None)
        return site

    def _site_of_path(self, path: str) -> Site | None:
        structure = self.report.structure
        assert structure is not None
        parts = path.split(".")
        for depth in range(len(parts), 0, -1):  # the deepest class that assigns it, from the user's code
            parent = self.cells.get(".".join(parts[: depth - 1]))
            cell = structure.cells.get(parent) if parent is not None else None
            if cell is not None:
                site = self.sources.assignment(type(cell), parts[depth - 1])
                if site is not None:
                    return site
        return None

    def site(self, finding: Finding, check: Check | None) -> Site | None:
        if self.optimizer_site is not None and (about_optimizer(check) or finding.subject == self.optimizer):
            return self.optimizer_site
        step = _STEP.match(finding.subject)
        source = self._source(finding.subject)
        if source is not None:  # a data-pipeline step (or a column: its source), added by the factory
            site = self._called(source.group(1), int(source.group(2)))
            if step is None or site is None or step.group(1) == source.group(1):
                return site
            # a step chained on the pipeline's source: its call on that line or after it
            nth = int(step.group(2))
            return next(
                (
                    s
                    for f in self.factories
                    if (s := self.sources.calls_after(f, step.group(1), site.line, nth))
                ),
                None,
            )
        if self.report.structure is None:
            return None
        paths = self._paths(finding)
        for path in paths:
            site = self._site_of_path(path)
            if site is not None:
                return site
        if _CLASS.match(finding.subject):  # a loss (GA4xx) or an optimizer, named by its class
            site = self._called(finding.subject)
            if site is not None:
                return site
        if paths or finding.subject == "(root)" or "cell:" in finding.nodes:
            return self._root_site()  # the network, or an item of a container the factory builds
        return None
