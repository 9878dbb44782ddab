"""A call that does not fit a public function's signature is a graphaudit error that says how to call it.

Python's own ``TypeError`` (``audit() takes from 1 to 2 positional arguments but 3 were
given``) names neither the keywords nor the likely intent; every public entry point answers
with an :class:`~graphaudit.errors.ArgumentTypeError` instead (also a ``TypeError``).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pytest

import graphaudit
import graphaudit.fingerprint
import graphaudit.probe
import graphaudit.testing
import graphaudit.watch
from graphaudit.errors import ArgumentTypeError, GraphAuditError
from graphaudit.spec import Spec

# Records are built positionally on purpose (Finding(...), Report(...)); exceptions are
# raised, not called by users; Watcher is made by watch(), never by the user; gradient_norms runs
# inside compiled steps (@jit, GRAPH_MODE), where MindSpore compiles its body and a Python check of
# its arguments cannot run.
NOT_ENTRY_POINTS = {
    "gradient_norms",
    "Finding",
    "Report",
    "Watcher",
    "ParameterProbe",
    "ProbeResult",
    "Fingerprint",
    "ParameterDigest",
}


def _public_faces() -> dict[str, object]:
    faces = {}
    for module in (
        graphaudit,
        graphaudit.probe,
        graphaudit.fingerprint,
        graphaudit.testing,
        graphaudit.watch,
    ):
        for name in module.__all__:
            value = getattr(module, name)
            if not callable(value) or name in NOT_ENTRY_POINTS:
                continue
            if isinstance(value, type) and issubclass(value, BaseException):
                continue
            faces[name] = value
    for cls, methods in (
        (Spec, ("from_net", "from_graph", "from_toml", "load", "save", "diff")),
        (graphaudit.Report, ("render", "text", "to_json")),
        (graphaudit.watch.Watcher, ("step", "validate")),
    ):
        for method in methods:
            faces[f"{cls.__name__}.{method}"] = getattr(cls, method)
    return faces


FACES = _public_faces()


def _callable(face: object) -> Any:
    """*face* ready to call as the user calls it: a class's ``__init__`` or a method given a stand-in self.

    The signature is checked before ``self`` is used, so any object will do.
    """
    if isinstance(face, type):
        return functools.partial(face.__init__, object.__new__(face))
    if next(iter(inspect.signature(face).parameters), "") == "self":
        return functools.partial(face, object())
    return face


def _parameters(face: object) -> list[inspect.Parameter]:
    return list(inspect.signature(_callable(face)).parameters.values())


def _positional(params: list[inspect.Parameter]) -> list[inspect.Parameter]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in params if p.kind in kinds]


def test_every_entry_point_is_listed():
    assert {
        "audit",
        "audit_dataset",
        "run_probe",
        "AuditCallback",
        "Watch",
        "watch",
        "render",
        "to_networkx",
    } <= set(FACES)
    for name, face in FACES.items():
        function = face.__init__ if isinstance(face, type) else face
        if name == "Spec":
            continue  # a dataclass: its __new__ checks the call (test below)
        assert hasattr(function, "__wrapped__"), (
            f"{name} is not wrapped by graphaudit.errors.arguments.checked_call"
        )


@pytest.mark.parametrize("name", sorted(n for n in FACES if n != "Spec"))
def test_one_positional_too_many(name):
    positional = _positional(_parameters(FACES[name]))
    with pytest.raises(ArgumentTypeError) as caught:
        _callable(FACES[name])(*[None] * (len(positional) + 1))
    message = str(caught.value)
    assert message.startswith(f"{name}() takes {len(positional)} positional argument"), message
    assert "keywords" in message, message


@pytest.mark.parametrize("name", sorted(n for n in FACES if n != "Spec"))
def test_unknown_keyword(name):
    face = FACES[name]
    written = inspect.signature(inspect.unwrap(face.__init__ if isinstance(face, type) else face))
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in written.parameters.values()):
        pytest.skip(
            "takes further keywords: they are checked against their declarations (test_option_parsing)"
        )
    with pytest.raises(
        ArgumentTypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'zzz_unknown'"
    ):
        required = [p for p in _positional(_parameters(FACES[name])) if p.default is inspect.Parameter.empty]
        _callable(FACES[name])(*[None] * len(required), zzz_unknown=1)


def test_audit_positional_names_what_to_write():
    from mindspore import nn

    net = nn.Dense(2, 2)
    with pytest.raises(ArgumentTypeError) as caught:
        graphaudit.audit(net, nn.SGD(net.trainable_params()), "x")
    assert str(caught.value) == (
        "audit() takes 2 positional arguments (net, optimizer) but 3 were given: the others are keywords, "
        "e.g. audit(net, optimizer, inputs=..., label=...)"
    )
    assert isinstance(caught.value, TypeError)  # still what `except TypeError` expects


def test_misspelt_keyword_gets_did_you_mean():
    with pytest.raises(ArgumentTypeError, match=r"'num_class'; did you mean 'num_classes'\?"):
        graphaudit.audit_dataset(object(), num_class=10)


def test_missing_argument_is_named():
    with pytest.raises(ArgumentTypeError, match=r"^run_probe\(\) missing a required argument: 'label'"):
        graphaudit.probe.run_probe(None, None, None, None)


def test_spec_fields_by_keyword_and_checked_when_made():
    with pytest.raises(ArgumentTypeError, match=r"^Spec\(\) takes its fields by keyword"):
        Spec(["backbone.*"])
    with pytest.raises(GraphAuditError, match=r"parameters.frozen must be a list .* got a string"):
        Spec(frozen="backbone.*")  # iterated by letter, it would have frozen nothing
    spec = Spec(frozen=["backbone.*"])
    spec.frozen = "backbone.*"
    with pytest.raises(GraphAuditError, match="got a string"):
        spec.validate()  # a field changed after the spec was made is caught when the audit reads it
