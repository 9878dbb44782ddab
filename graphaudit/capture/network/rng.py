"""The audit's own random draws, kept apart from every other thread's.

An audit runs the user's ``construct``, which may draw random numbers: Dropout and
``ops.rand``-style operations advance MindSpore's per-operation seed counters (on CPU the
only random state its working kernels use), ``mindspore.default_generator`` (on devices),
and the code may call ``numpy.random`` or ``random``. Saving that process-wide state and
setting it back afterwards would also rewind the draws other threads made meanwhile: a
second thread's next numbers would repeat. So while a thread audits, its draws go to a
private copy of each state, taken when the audit starts, and every other thread keeps
drawing from the real one, which the audit never writes.

MindSpore has no per-thread random state; what this does is route by thread the Python
functions through which that state is read and advanced: ``mindspore.common.seed``'s
``_get_op_seed``/``_update_seeds`` (looked up as module globals by every caller), the
default generator's ``_step``/``get_state``/``set_state``, and the module-level functions
of ``numpy.random`` and ``random``. A draw that bypasses them, through a function bound
before the audit started (``from numpy.random import rand`` at import time), reaches the
real state; when no other Python thread ran during the audit, that state is set back as
before, since only the audit can have drawn it; otherwise it is left alone (see
docs/probe.md).

    >>> import numpy as np
    >>> with private_random_state():
    ...     inside = np.random.get_state()[1][0]
    ...     _ = np.random.rand(3)  # the audit's own draw: a private copy advances
    >>> bool(np.random.get_state()[1][0] == inside)
    True
"""

from __future__ import annotations

import importlib
import random
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["private_random_state"]

_LOCK = threading.RLock()


class _Private:
    """One thread's private random state, a stack for nested audits."""

    def __init__(self) -> None:
        self.counters: list[dict[Any, Any]] = []
        self.numpy: list[Any] = []  # numpy.random.RandomState, made on first use (_Deferred)
        self.python: list[random.Random] = []
        self.generator: list[Any] = []


_OWN: dict[int, _Private] = {}
_INSTALLED: list[tuple[Any, str, Any, bool]] = []  # (owner, attribute, original, was an instance attribute)


def _mine() -> _Private | None:
    own = _OWN.get(threading.get_ident())
    return own if own is not None and own.counters else None


def _ms_seed() -> Any:
    return importlib.import_module("mindspore.common.seed")  # the package re-exports a function `seed`


def _default_generator() -> Any:
    try:
        return importlib.import_module("mindspore.common.generator").default_generator
    except (ImportError, AttributeError):
        return None


def _routed(
    original: Callable[..., Any], private: Callable[[_Private], Callable[..., Any]]
) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        own = _mine()
        return original(*args, **kwargs) if own is None else private(own)(*args, **kwargs)

    call.__wrapped__ = original  # type: ignore[attr-defined]
    call.__doc__ = getattr(original, "__doc__", None)
    return call


def _get_op_seed(own: _Private) -> Callable[..., Any]:
    counters = own.counters[-1]

    def get(op_seed: Any, kernel_name: Any) -> Any:
        return counters.setdefault((kernel_name, op_seed), op_seed)

    return get


def _update_seeds(own: _Private) -> Callable[..., Any]:
    counters = own.counters[-1]

    def update(op_seed: Any, kernel_name: Any) -> None:
        # MindSpore's _update_seeds (2.x), on the private table: the same step it adds.
        if op_seed is not None:
            key = _ms_seed().keyConstant
            counters[(kernel_name, op_seed)] = counters.get((kernel_name, op_seed)) + (key[0] ^ key[2])

    return update


#: What :func:`_install_all` sets, ``(owner, attribute, original, routed)``, planned once: ``dir()``
#: over ``numpy.random`` and ``random`` and the routed functions cost ~0.25 ms an audit. Planned
#: again when any original is no longer in place (the user replaced one between audits). The
#: generator's methods are bound anew on each read: equal, not the same object, when in place.
#: ``numpy.random`` and ``random`` are compared whole (_NAMESPACES): a function of theirs the user
#: replaced and later put back must be routed again, though no entry of the plan names it.
_PLAN: list[tuple[Any, str, Any, Callable[..., Any]]] = []
_NAMESPACES: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (a module's namespace, a copy when planned)


def _unchanged(namespace: dict[str, Any], copy: dict[str, Any]) -> bool:
    return len(namespace) == len(copy) and all(
        namespace.get(name, copy) is value for name, value in copy.items()
    )


def _planned() -> list[tuple[Any, str, Any, Callable[..., Any]]]:
    if (
        _PLAN
        and all(_unchanged(namespace, copy) for namespace, copy in _NAMESPACES)
        and all(
            _in_place(getattr(owner, attribute, None), original) for owner, attribute, original, _ in _PLAN
        )
    ):
        return _PLAN
    _NAMESPACES[:] = [(vars(module), dict(vars(module))) for module in (np.random, random)]
    plan = []
    seed = _ms_seed()
    plan.append((seed, "_get_op_seed", seed._get_op_seed, _routed(seed._get_op_seed, _get_op_seed)))
    plan.append((seed, "_update_seeds", seed._update_seeds, _routed(seed._update_seeds, _update_seeds)))
    generator = _default_generator()
    if generator is not None:
        for name in ("_step", "get_state", "set_state", "seed", "manual_seed", "initial_seed"):
            method = getattr(generator, name, None)
            if method is not None:
                routed = _routed(method, lambda own, name=name: getattr(own.generator[-1], name))
                plan.append((generator, name, method, routed))
    global_numpy = np.random.mtrand._rand
    for name in dir(np.random):
        value = getattr(np.random, name)
        if getattr(value, "__self__", None) is global_numpy:
            routed = _routed(value, lambda own, name=name: getattr(own.numpy[-1], name))
            plan.append((np.random, name, value, routed))
    global_python = random._inst  # type: ignore[attr-defined]
    for name in dir(random):
        value = getattr(random, name)
        if getattr(value, "__self__", None) is global_python:
            routed = _routed(value, lambda own, name=name: getattr(own.python[-1], name))
            plan.append((random, name, value, routed))
    _PLAN[:] = plan
    return _PLAN


def _in_place(current: Any, original: Any) -> bool:
    return current is original or (isinstance(current, types.MethodType) and current == original)


def _install_all() -> None:
    for owner, attribute, original, routed in _planned():
        instance = not isinstance(owner, type) and attribute in getattr(owner, "__dict__", {})
        _INSTALLED.append((owner, attribute, original, instance))
        setattr(owner, attribute, routed)


def _uninstall_all() -> None:
    while _INSTALLED:
        owner, attribute, original, instance = _INSTALLED.pop()
        if instance or isinstance(owner, type) or not hasattr(type(owner), attribute):
            setattr(owner, attribute, original)
        else:
            delattr(owner, attribute)  # the class's method shows through again


def _real_states(generator: Any) -> tuple[Any, Any, Any, Any]:
    """The real states (call before this thread's draws are routed, or from outside an audit)."""
    seed = _ms_seed()
    return (
        dict(seed._KERNEL_SEED),
        np.random.mtrand._rand.get_state(),
        random._inst.getstate(),  # type: ignore[attr-defined]
        None if generator is None else type(generator).get_state(generator),
    )


class _Deferred:
    """A private random state made on first use from the state it was given.

    Making one costs more than most audits' draws from it: a MindSpore ``Generator`` ~0.4 ms (the
    CPU's kernels draw from the seed counters instead), a ``numpy`` ``RandomState`` ~0.15 ms.
    """

    def __init__(self, make: Callable[[], Any], state: Any, set_state: str) -> None:
        self._make, self._state, self._set_state = make, state, set_state
        self._made: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._made is None:
            self._made = self._make()
            getattr(self._made, self._set_state)(self._state)
        return getattr(self._made, name)


def _private_generator(state: Any) -> Any:
    if state is None:
        return None
    return _Deferred(importlib.import_module("mindspore.common.generator").Generator, state, "set_state")


@contextmanager
def private_random_state() -> Iterator[None]:
    """Run with this thread's random draws going to private copies; other threads untouched."""
    ident = threading.get_ident()
    generator = _default_generator()
    with _LOCK:
        own = _OWN.get(ident)
        if own is not None and own.counters:  # nested: a copy of the outer audit's private state
            counters = dict(own.counters[-1])
            numpy_state, python_state = own.numpy[-1].get_state(), own.python[-1].getstate()
            inner = own.generator[-1]
            generator_state = None if inner is None else inner.get_state()
            outermost = False
            counters_at_start = counters
        else:
            counters, numpy_state, python_state, generator_state = _real_states(generator)
            counters_at_start = dict(counters)
            outermost = True
        private_numpy = _Deferred(np.random.RandomState, numpy_state, "set_state")
        private_python = random.Random()
        private_python.setstate(python_state)
        private_generator = _private_generator(generator_state)
        if not _OWN:
            _install_all()
        own = _OWN.setdefault(ident, _Private())
        own.counters.append(counters)
        own.numpy.append(private_numpy)
        own.python.append(private_python)
        own.generator.append(private_generator)
    alone = threading.active_count() == 1
    try:
        yield
    finally:
        with _LOCK:
            for stack in (own.counters, own.numpy, own.python, own.generator):
                stack.pop()
            if not own.counters:
                del _OWN[ident]
            if not _OWN:
                _uninstall_all()
            if outermost and alone and threading.active_count() == 1:
                # No other thread could have drawn: a change is the audit's own, through a
                # function bound before it started. Put back, as an audit always did.
                _put_back(counters_at_start, numpy_state, python_state, generator, generator_state)


def _put_back(
    counters: dict[Any, Any], numpy_state: Any, python_state: Any, generator: Any, state: Any
) -> None:
    table = _ms_seed()._KERNEL_SEED
    if table != counters:
        table.clear()
        table.update(counters)
    now = np.random.get_state()
    if now[0] != numpy_state[0] or not np.array_equal(now[1], numpy_state[1]) or now[2:] != numpy_state[2:]:
        np.random.set_state(numpy_state)
    if random.getstate() != python_state:
        random.setstate(python_state)
    if state is not None and generator.get_state().asnumpy().tobytes() != state.asnumpy().tobytes():
        generator.set_state(state)
