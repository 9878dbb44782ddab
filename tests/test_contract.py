"""The check contract is enforced: a check (or a producer) is served only the evidence it declares.

``needs=`` is required (the check is not run without it), ``uses=`` optional (``ctx.get``
returns ``None`` when it is absent); anything else raises ``UndeclaredEvidenceError``.
Stand-in checks are registered in a copy of the registry that is put back afterwards.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest
from mindspore import nn

import graphaudit
from graphaudit import checks
from graphaudit.checks import all_checks, register
from graphaudit.checks.context import AuditContext
from graphaudit.errors import InternalError, UndeclaredEvidenceError
from graphaudit.evidence import REQUEST_KEYWORDS, AuditRequest, Evidence, EvidenceSet, Requirement
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.runner import run_checks
from graphaudit.runner.request import REPORT_KEYWORDS, build_request

DOC = """A stand-in.

    What it does:
        Reads evidence.

    Why is this bad:
        It is a test.

    Example:
        ``x``

    Use instead:
        ``y``
    """


@pytest.fixture
def registry(monkeypatch):
    """A copy of the check registry, put back after the test (whatever it registered)."""
    all_checks()  # every real check imported first, so the copy holds them
    monkeypatch.setattr(checks, "_REGISTRY", dict(checks._REGISTRY))
    return checks._REGISTRY


def _stand_in(check_id: str, read, **declared):
    def run(ctx):
        read(ctx)
        return iter(())

    run.__doc__ = DOC
    run.__module__ = f"tests.stand_in_{check_id.lower()}"
    register(check_id, "stand-in", severity="info", **declared)(run)
    return checks._REGISTRY[check_id]


def _run(check, net=None, **keywords):
    net = net if net is not None else nn.Dense(2, 2)
    return run_checks(EvidenceSet(build_request(net, **keywords)), [check])


def test_a_check_that_reads_an_undeclared_kind_fails(registry):
    check = _stand_in("GA799", lambda ctx: ctx.get(OptimizerView))
    with pytest.raises(UndeclaredEvidenceError, match=r"check GA799 \(stand-in\) read OptimizerView") as err:
        _run(check)
    assert err.value.reader.startswith("check GA799") and err.value.kind == "OptimizerView"


def test_a_shorthand_reads_its_kind_too(registry):
    """``ctx.optimizer`` is ``OptimizerView``, ``ctx.mode`` ``IntendedMode``: undeclared, they fail too."""
    check = _stand_in("GA798", lambda ctx: ctx.mode)
    with pytest.raises(UndeclaredEvidenceError, match="IntendedMode"):
        _run(check)


def test_a_uses_kind_is_none_when_absent_and_there_when_given(registry):
    seen = []
    check = _stand_in("GA797", lambda ctx: seen.append(ctx.get(OptimizerView)), uses=(OptimizerView,))
    net = nn.Dense(2, 2)
    report = _run(check, net)
    assert seen == [None] and report.checks_run == ["GA797"]  # optional: it runs without it
    _run(check, net, optimizer=nn.SGD(net.trainable_params()))
    assert seen[1] is not None and seen[1].holds(net.weight)


def test_need_is_for_needs_only(registry):
    check = _stand_in("GA796", lambda ctx: ctx.need(OptimizerView), uses=(OptimizerView,))
    with pytest.raises(UndeclaredEvidenceError, match="with need"):
        _run(check)


def test_a_check_without_its_needs_is_not_run(registry):
    check = _stand_in("GA795", lambda ctx: ctx.need(OptimizerView), needs=(OptimizerView,))
    report = _run(check)
    assert report.checks_run == [] and [n.check_id for n in report.not_run] == ["GA795"]


def test_the_request_is_not_served_to_a_check(registry):
    check = _stand_in("GA794", lambda ctx: ctx.evidence.request)
    with pytest.raises(UndeclaredEvidenceError, match="the audit request"):
        _run(check)


def optimizer_names(ctx):
    """A computation shared between checks (AuditContext.shared takes module-level functions)."""
    view = ctx.get(OptimizerView)
    return [] if view is None else [p.name for p in view.parameters]


def test_a_shared_computation_is_served_only_to_checks_declaring_what_it_read(registry):
    first = _stand_in("GA792", lambda ctx: ctx.shared(optimizer_names), uses=(OptimizerView,))
    second = _stand_in("GA793", lambda ctx: ctx.shared(optimizer_names))
    net = nn.Dense(2, 2)
    have = EvidenceSet(build_request(net, nn.SGD(net.trainable_params())))
    with pytest.raises(UndeclaredEvidenceError, match=r"GA793.*OptimizerView"):
        run_checks(have, [first, second])


def test_a_producer_that_reads_an_undeclared_kind_fails(monkeypatch):
    monkeypatch.setattr(Evidence, "_registry", dict(Evidence._registry))  # the stand-in kind goes away after

    @dataclasses.dataclass(frozen=True)
    class StandInKind(Evidence):
        title = "a stand-in kind"
        requirement = Requirement("pass nothing", "give nothing")

        @classmethod
        def produce(cls, request, have):
            have.get(OptimizerView)
            return cls()

    with pytest.raises(UndeclaredEvidenceError, match="the producer of StandInKind read OptimizerView"):
        EvidenceSet(AuditRequest(nn.Dense(2, 2))).get(StandInKind)


def test_ga205_is_not_run_without_an_optimizer():
    report = graphaudit.audit(nn.Dense(3, 2), spec=graphaudit.Spec(frozen=["weight"]))
    assert "GA205" not in report.checks_run
    assert "GA205" in {n.check_id for n in report.not_run}


# -- every registered check declares what it reads, read from its source --------------------

#: What the context's shorthands read.
SHORTHANDS = {
    "spec": "DeclaredDesign",
    "optimizer": "OptimizerView",
    "optimizer_entries": "OptimizerView",
    "optimizer_parameters": "OptimizerView",
    "in_optimizer": "OptimizerView",
    "traced": "TracedPass",
    "loss_graph": "LossTrace",
    "loss_fn": "LossTrace",
    "mode": "IntendedMode",
}
PACKAGE = Path(checks.__file__).parent


def _reads_of(node: ast.AST, receiver: str) -> tuple[set[tuple[str, str]], set[str]]:
    """The kinds *node* reads with ``receiver.get/need/missing(Kind)``, and the names it mentions.

    A read is ``("need", "Kind")`` or ``("get", "Kind")`` (``missing`` asks as ``get`` does);
    the names are those of the helpers it may call, which the caller follows.

    An argument that is not a kind's name (``ctx.get(kind)``) is kept as written: no kind is
    declared under it, so a read hidden behind a variable fails rather than passing unseen.
    """
    reads, names = set(), set()
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and isinstance(sub.func.value, ast.Name)
            and sub.func.value.id == receiver
            and sub.func.attr in ("get", "need", "missing")
            and sub.args
        ):
            reads.add(("need" if sub.func.attr == "need" else "get", ast.unparse(sub.args[0])))
        if isinstance(sub, ast.Name):
            names.add(sub.id)
    return reads, names


def _functions() -> tuple[dict, dict]:
    """Per function of the checks package: the kinds it reads from ``ctx`` and the names it mentions."""
    functions, imports = {}, {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text())
        imports[module] = {
            alias.asname or alias.name: (node.module, alias.name)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graphaudit.checks")
            for alias in node.names
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            reads, names = _reads_of(node, "ctx")
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id == "ctx"
                    and sub.attr in SHORTHANDS
                ):
                    reads.add(("get", SHORTHANDS[sub.attr]))
            functions[(module, node.name)] = (reads, names)
    return functions, imports


def _reads(functions, imports, key, seen) -> set:
    if key in seen or key not in functions:
        return set()
    seen.add(key)
    module = key[0]
    reads, names = functions[key]
    found = set(reads)
    for name in names:
        target = (module, name) if (module, name) in functions else imports[module].get(name)
        if target is not None:
            found |= _reads(functions, imports, target, seen)
    return found


def test_every_check_declares_every_kind_it_reads():
    """Read statically, through the shared helpers it calls: a path no sample takes is covered too."""
    functions, imports = _functions()
    ga001 = all_checks()["GA001"]
    assert ("get", "DataSample") in _reads(functions, imports, (ga001.module, "check"), set())  # it reads
    wrong = []
    for check in all_checks().values():
        needs = {kind.__name__ for kind in check.needs} | {"NetworkGraph"}
        served = needs | {kind.__name__ for kind in check.uses}
        for how, kind in _reads(functions, imports, (check.module, check.run.__name__), set()):
            if kind not in (needs if how == "need" else served):
                wrong.append(f"{check.check_id} reads {kind} with {how}() undeclared")
    assert not wrong, wrong


def test_no_check_reaches_around_its_bound_context():
    """``ctx.evidence.request`` raises; the private fields behind it are not read either (statically)."""
    private = {"request", "_request", "_made", "_needs", "_uses", "_reader", "_recorders"}
    wrong = [
        f"{path.relative_to(PACKAGE.parent.parent)}:{node.lineno} .{node.attr}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "context.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in private
    ]
    assert not wrong, wrong


def test_every_check_declares_only_evidence_kinds_and_no_kind_twice():
    for check in all_checks().values():
        assert not set(check.needs) & set(check.uses), check.check_id


# -- audit()'s fixed keywords: one declaration ----------------------------------------------


def test_audit_spells_out_the_declared_keywords():
    """audit()'s explicit signature (for editors) is the declaration's: the request's fields, the report's."""
    from graphaudit.evidence import all_options

    params = list(inspect.signature(graphaudit.audit).parameters)
    options = list(all_options())
    assert params[0] == "net" and params[len(params) - len(options) :] == options
    assert sorted(params[1 : len(params) - len(options)]) == sorted([*REQUEST_KEYWORDS, *REPORT_KEYWORDS])
    request_fields = {f.name for f in dataclasses.fields(AuditRequest)}
    assert set(REQUEST_KEYWORDS) < request_fields


def test_build_request_takes_the_declared_keywords_only():
    with pytest.raises(TypeError, match="unexpected keywords"):
        build_request(nn.Dense(2, 2), probes=1)


def test_an_unknown_audit_keyword_lists_every_keyword():
    with pytest.raises(TypeError) as err:
        graphaudit.audit(nn.Dense(2, 2), confg=False)
    assert "did you mean 'config'" in str(err.value) or "config" in str(err.value)
    for name in (*REQUEST_KEYWORDS, *REPORT_KEYWORDS):
        assert name in str(err.value)


def test_checks_declared_with_a_stand_in_declaration_refuse_a_kind_in_needs_and_uses(registry):
    with pytest.raises(ValueError, match="needs= and uses="):
        _stand_in("GA791", lambda ctx: None, needs=(DeclaredDesign,), uses=(DeclaredDesign,))


# -- every producer declares what it reads, read from its module's source --------------------


def _producer_reads(path: Path) -> dict[str, set[tuple[str, str]]]:
    """Per evidence class of *path*: the kinds its methods (and the module's functions they call) read from ``have``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {n.name: _reads_of(n, "have") for n in tree.body if isinstance(n, ast.FunctionDef)}

    def closure(reads, names, seen):
        found = set(reads)
        for name in names - seen:
            if name in functions:
                seen.add(name)
                found |= closure(*functions[name], seen)
        return found

    return {
        node.name: closure(*_reads_of(node, "have"), set())
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }


def test_a_check_and_a_producer_are_read_alike():
    """One reading for both receivers: a kind behind a variable is seen (and so fails) for a producer too."""
    source = ast.parse(
        "def f(ctx, have):\n    ctx.need(A), ctx.missing(B), have.get(C), have.need(D), have.get(kind)\n"
    )
    assert _reads_of(source, "ctx")[0] == {("need", "A"), ("get", "B")}
    assert _reads_of(source, "have")[0] == {("get", "C"), ("need", "D"), ("get", "kind")}
    assert {"ctx", "have", "A", "kind"} <= _reads_of(source, "have")[1]


def test_every_producer_declares_every_kind_it_reads():
    """Read statically, like the checks above: a producer's path no test takes is covered too."""
    from graphaudit import evidence

    kinds = {kind.__name__: kind for kind in evidence.all_kinds()}
    package = Path(evidence.__file__).parent
    seen, wrong = set(), []
    for path in sorted(package.glob("*.py")):
        for name, reads in _producer_reads(path).items():
            kind = kinds.get(name)
            if kind is None:
                continue
            seen.add(name)
            needs = {k.__name__ for k in kind.needs} | {"NetworkGraph"}
            served = needs | {k.__name__ for k in kind.uses}
            wrong += [
                f"{name} reads {read} with {how}()"
                for how, read in reads
                if read not in (needs if how == "need" else served)
            ]
    assert not wrong, wrong
    assert {"LabelCounts", "ClassCount", "DataConsumer", "GradientNoise"} <= seen  # the scan finds them


def test_a_shared_computation_defined_inside_a_function_is_refused():
    def helper(ctx):
        def compute(ctx):  # a new object at each call of helper: it would never be shared
            return 1

        return ctx.shared(compute)

    net = nn.Dense(2, 2)
    ctx = AuditContext(EvidenceSet(build_request(net, None)))
    with pytest.raises(InternalError, match="define it at module level"):
        helper(ctx)
