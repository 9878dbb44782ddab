"""The usual range of the peak learning rate of each optimizer family (GA721).

:data:`RANGES` holds, per family, the *usual* range (info outside it) and the *plausible*
range (a warning outside it) of the peak rate, with where the usual values come from; see
``docs/design-rules.md``. :func:`family_of` says which family a MindSpore optimizer belongs
to, by class. The rates themselves are read once by
:class:`~graphaudit.evidence.schedule.LearningRates` (the schedules of GA914-GA916).

Example:
    >>> from mindspore import nn
    >>> net = nn.Dense(2, 2)
    >>> family_of(nn.AdamWeightDecay(net.trainable_params())), RANGES["adam"].plausible
    ('adam', (1e-07, 0.03))
    >>> family_of(nn.LARS(nn.Momentum(net.trainable_params(), 0.1, 0.9))) is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

__all__ = ["RANGES", "Family", "family_of"]


@dataclass(frozen=True)
class Family:
    """The usual and the plausible range of the peak learning rate of an optimizer family."""

    name: str
    usual: tuple[float, float]
    plausible: tuple[float, float]
    source: str


RANGES: Final = {
    "sgd": Family(
        "SGD / Momentum", (1e-4, 1.0), (1e-6, 10.0), "0.1 x batch/256 for ResNets (Goyal et al. 2017)"
    ),
    "adam": Family(
        "Adam-like",
        (1e-5, 1e-2),
        (1e-7, 0.03),
        "1e-3 (Kingma & Ba 2015); 1e-4-5e-4 transformers, 1e-5-5e-5 fine-tuning",
    ),
    "lamb": Family(
        "LAMB", (1e-4, 0.05), (1e-6, 0.2), "peak rates of the order of 1e-3 to 1e-2 (You et al. 2020)"
    ),
    "rmsprop": Family(
        "RMSProp",
        (1e-5, 0.1),
        (1e-7, 1.0),
        "1e-3 (Hinton's lecture 6e); 0.256 at batch 4096 for EfficientNet",
    ),
    "adagrad": Family("Adagrad", (1e-4, 0.5), (1e-6, 5.0), "0.01-0.1 (Duchi et al. 2011)"),
    "adadelta": Family(
        "Adadelta", (0.01, 10.0), (1e-4, 100.0), "1.0, a multiplier of the adaptive step (Zeiler 2012)"
    ),
}
_CLASSES: Final = {
    "SGD": "sgd",
    "Momentum": "sgd",
    "ASGD": "sgd",
    "Adam": "adam",
    "AdamW": "adam",
    "AdamWeightDecay": "adam",
    "AdamOffload": "adam",
    "LazyAdam": "adam",
    "AdaMax": "adam",
    "Adamax": "adam",
    "NAdam": "adam",
    "RAdam": "adam",
    "Lamb": "lamb",
    "RMSProp": "rmsprop",
    "RMSprop": "rmsprop",
    "Adagrad": "adagrad",
    "ProximalAdagrad": "adagrad",
    "Adadelta": "adadelta",
}


def family_of(optimizer: Any) -> str | None:
    """The family of a MindSpore optimizer, by class (``None``: unknown, or a wrapper like LARS)."""
    for cls in type(optimizer).__mro__:
        if (getattr(cls, "__module__", "") or "").startswith("mindspore.") and cls.__name__ in _CLASSES:
            return _CLASSES[cls.__name__]
    return None
