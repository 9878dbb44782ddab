"""Watch the real training: watchpoints (checks GA950-GA979) and an offline dashboard.

:class:`Watch` is a ``mindspore.train.Callback`` for ``Model.train`` / ``Model.fit``;
:func:`watch` a context manager for functional loops (``w.step(loss=..., grads=...)``). Both
sample the run (:mod:`graphaudit.watch.record`), judge it with the watchpoints while it trains
(:mod:`graphaudit.watch.session`), and afterwards hold ``report``, the same
:class:`~graphaudit.report.Report` that :func:`graphaudit.audit` returns. With ``out=`` they
write the dashboard (:mod:`graphaudit.watch.dashboard`). See ``docs/watch.md``.

Example:
    >>> from graphaudit.watch import watchpoints
    >>> watchpoints()[0].check_id, watchpoints()[0].family
    ('GA950', 'training watch (watchpoints on a real training run)')
"""

from __future__ import annotations

import sys
import types
from typing import Any

from graphaudit.watch.callback import Watch
from graphaudit.watch.compiled import gradient_norms
from graphaudit.watch.loop import Watcher, watch
from graphaudit.watch.session import DEFAULT_EVERY, WatchFailed, watchpoints

__all__ = ["DEFAULT_EVERY", "Watch", "WatchFailed", "Watcher", "gradient_norms", "watch", "watchpoints"]


class _CallableModule(types.ModuleType):
    """``graphaudit.watch`` is both this package and the function :func:`watch`: importing the package
    makes it the attribute ``watch`` of ``graphaudit``, so the package itself calls :func:`watch`."""

    def __call__(self, net: Any, optimizer: Any, **options: Any) -> Any:
        return watch(net, optimizer, **options)


sys.modules[__name__].__class__ = _CallableModule
