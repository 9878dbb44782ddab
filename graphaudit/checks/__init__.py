"""The check registry.

Each check lives in its own module in this package, named after its ID
(``ga201_trainable_not_in_optimizer.py``), and registers one function with
:func:`register`. The function gets an :class:`~graphaudit.context.AuditContext` and
yields :class:`~graphaudit.findings.Finding` records made with ``ctx.finding(...)``.

The docstring of a check's function is its documentation (``docs/checks.md`` is generated
from it) and must have the sections *What it does*, *Why is this bad*, *Example* and
*Use instead*.

Example:
    >>> from graphaudit.checks import all_checks
    >>> sorted(all_checks())[0]
    'GA101'
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.findings import Finding

if TYPE_CHECKING:
    from graphaudit.context import AuditContext

__all__ = ["FAMILIES", "Check", "all_checks", "register"]

CheckFunction = Callable[["AuditContext"], Iterable[Finding]]

FAMILIES = {
    "1": "weight sharing",
    "2": "optimizer coverage and freezing",
    "3": "wiring and connectivity",
    "4": "loss and output pairing",
    "5": "train/eval mode",
    "6": "initialization",
    "7": "API misuse",
    "8": "distributed consistency",
    "9": "probe step (one real training step, confirmed from the numbers)",
}

REQUIRED_DOC_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead")
_ID = re.compile(r"^GA[1-9]\d\d$")
_NAME = re.compile(r"^[a-z]+(-[a-z0-9]+)*$")
_REGISTRY: dict[str, Check] = {}


@dataclass(frozen=True)
class Check:
    """A registered check: its ID, kebab-case name, what it needs, and its function."""

    check_id: str
    name: str
    run: CheckFunction
    needs_inputs: bool = False
    needs_probe: bool = False

    @property
    def family(self) -> str:
        return FAMILIES[self.check_id[2]]

    @property
    def doc(self) -> str:
        return self.run.__doc__ or ""


def register(
    check_id: str, name: str, *, needs_inputs: bool = False, needs_probe: bool = False
) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as check *check_id* called *name*.

    *needs_inputs*: the check reads the traced forward pass; *needs_probe*: it reads the
    result of ``audit(..., probe=True)`` (one real training step).
    """

    def decorate(run: CheckFunction) -> CheckFunction:
        if not _ID.match(check_id):
            raise ValueError(f"check id {check_id!r} must look like GA101 (GA, family digit 1-9, two digits)")
        if not _NAME.match(name):
            raise ValueError(f"check name {name!r} must be kebab-case")
        missing = [s for s in REQUIRED_DOC_SECTIONS if s not in (run.__doc__ or "")]
        if missing:
            raise ValueError(f"the docstring of check {check_id} lacks the sections {missing}")
        existing = _REGISTRY.get(check_id)
        if existing is not None and existing.run.__qualname__ != run.__qualname__:
            raise ValueError(f"check id {check_id} is used twice ({existing.name}, {name})")
        _REGISTRY[check_id] = Check(check_id, name, run, needs_inputs, needs_probe)
        return run

    return decorate


def all_checks() -> dict[str, Check]:
    """Every check, by ID, in ID order (importing every check module first)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("ga"):
            importlib.import_module(f"{__name__}.{module.name}")
    return dict(sorted(_REGISTRY.items()))
