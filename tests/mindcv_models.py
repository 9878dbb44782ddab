"""One build per test process of each unmodified mindcv model that tests only audit or capture.

A build can cost more than every audit of it: vit_b_32_224's took ~9 s on 2 cores, nearly all
of it MindSpore's truncated-normal initialiser, against ~1.5 s an audit. An audit changes
nothing it audits (tests/test_isolation_and_errors.py, tests/test_state_twins.py), so the files
that audit or capture these models share one build each and run in one worker
(``SHARED_BUILDS`` in tests/conftest.py). A test that changes the network otherwise (freezes a
layer, injects a bug) builds its own; one that switches its mode uses :func:`in_mode`, which puts
every cell's flag back.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager

import pytest
from mindspore import nn

from graphaudit.capture.network.isolation import training_flags


@functools.cache
def _built(name: str) -> nn.Cell:
    mindcv = pytest.importorskip("mindcv")
    return mindcv.create_model(name, pretrained=False)


def unmodified(name: str) -> nn.Cell:
    """mindcv's *name* (``pretrained=False``), built once per process: switch its mode with :func:`in_mode` only."""
    return _built(name)


def in_mode(net: nn.Cell, training: bool) -> AbstractContextManager[None]:
    """*net* set to training mode or not (``set_train``) for a block, every cell's flag as it was after it."""
    return training_flags(net, training)
