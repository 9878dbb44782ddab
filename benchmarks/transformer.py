"""Tracing cost per traced operation, on a transformer LM of many small operations.

A GPT-style language model built from ``mindspore.nn`` cells (:func:`build_lm`): token and
position ``Embedding``, then ``layers`` blocks of ``LayerNorm`` -> attention (``Dense`` q, k, v,
o; heads split with ``ops.reshape``/``ops.transpose``, scores with ``ops.matmul``, a causal
mask, ``ops.softmax``) -> residual ``+`` -> ``LayerNorm`` -> ``Dense`` -> ``GELU`` -> ``Dense``
-> residual ``+``; a final ``LayerNorm`` and a language-model head *tied* to the token
embedding (its weight is the embedding table itself). Default: 12 layers, hidden 256, 4
heads, FFN 1024, vocabulary 2,048, one batch of 1x64 tokens. Much of a forward pass of it is
operations between cells, each only a few microseconds of arithmetic: where graphaudit's
tracing costs the most, relative to the pass.

Phases, timed interleaved in one process after one warm-up run of each:

- ``forward``: ``net(ids).asnumpy()`` (PyNative; the read waits for the asynchronous kernels).
- ``traced``: ``graphaudit.to_networkx(net, inputs=ids)``: the traced capture, everything an
  audit pays for the pass (structure walk, wrappers installed and removed, state saved and
  restored, one synchronisation).
- ``bare``: the same forward pass with *bare* wrappers installed on exactly the entry points
  graphaudit wraps (``graphaudit.capture.network.patching.patched`` with wrappers that only call the
  original: every ``Cell.__call__``, functional op, Tensor method and ``Primitive.__call__``).
  Only the pass is timed; installing and removing the wrappers is not (``install_s`` gives it).
- ``bare xK``: the same with ``K`` (default 101) bare wrappers nested around every entry point.

``N`` is the number of ``op`` + ``call`` nodes the traced capture records. Overhead per traced
operation, in microseconds:

- graphaudit: ``(traced - forward) / N``;
- bare wrapper: ``(bare xK - bare) / (K - 1) / N``, the cost of one more wrapper layer, per
  recorded node. A single layer costs well under 1 % of the pass, far below the run-to-run
  noise of a forward pass, so ``bare - forward`` alone would measure the noise; nesting K
  layers multiplies the same cost K-fold in the same pass. ``bare - forward`` is still
  reported (``direct``) for comparison.

Both are computed from the medians and from the minimums of the phases. ``wrapper_calls``
counts how many wrapped entry points one pass goes through (one counting pass, not timed):
more than ``N``, because entry points inside leaf cells and inside other operations are
passed through without being recorded.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import interleave, stats

DEFAULTS = {"layers": 12, "hidden": 256, "heads": 4, "ffn": 1024, "seq": 64, "vocab": 2048}


def build_lm(layers: int, hidden: int, heads: int, ffn: int, seq: int, vocab: int) -> Any:
    """The language model described in the module docstring (random weights)."""
    import numpy as np
    from mindspore import Tensor, nn, ops

    class Attention(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.heads, self.head_dim = heads, hidden // heads
            self.q = nn.Dense(hidden, hidden)
            self.k = nn.Dense(hidden, hidden)
            self.v = nn.Dense(hidden, hidden)
            self.o = nn.Dense(hidden, hidden)

        def split(self, y: Any, b: int, t: int) -> Any:
            return ops.transpose(ops.reshape(y, (b, t, self.heads, self.head_dim)), (0, 2, 1, 3))

        def construct(self, x: Any, mask: Any) -> Any:
            b, t, h = x.shape
            q, k, v = self.split(self.q(x), b, t), self.split(self.k(x), b, t), self.split(self.v(x), b, t)
            scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * (self.head_dim**-0.5) + mask
            weights = ops.softmax(scores, axis=-1)
            y = ops.reshape(ops.transpose(ops.matmul(weights, v), (0, 2, 1, 3)), (b, t, h))
            return self.o(y)

    class Block(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm((hidden,))
            self.attn = Attention()
            self.ln2 = nn.LayerNorm((hidden,))
            self.up = nn.Dense(hidden, ffn)
            self.act = nn.GELU()
            self.down = nn.Dense(ffn, hidden)

        def construct(self, x: Any, mask: Any) -> Any:
            x = x + self.attn(self.ln1(x), mask)
            return x + self.down(self.act(self.up(self.ln2(x))))

    class TiedHead(nn.Cell):
        """Logits from the token embedding's own table (weight tying)."""

        def __init__(self, table: Any) -> None:
            super().__init__()
            self.weight = table

        def construct(self, x: Any) -> Any:
            return ops.matmul(x, ops.transpose(self.weight, (1, 0)))

    class LM(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.pos = nn.Embedding(seq, hidden)
            self.blocks = nn.CellList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm((hidden,))
            self.lm_head = TiedHead(self.embed.embedding_table)
            causal = np.triu(np.full((seq, seq), -1e9, np.float32), 1)
            self.mask = Tensor(causal[None, None])

        def construct(self, ids: Any) -> Any:
            t = ids.shape[1]
            x = self.embed(ids) + self.pos(ops.arange(t).reshape(1, t))
            for block in self.blocks:
                x = block(x, self.mask)
            return self.lm_head(self.ln_f(x))

    return LM()


def _chain(original: Callable[..., Any], layers: int, counter: list[int] | None = None) -> Callable[..., Any]:
    """*original* inside *layers* bare wrappers that only call what they wrap (and count, with *counter*)."""
    fn = original
    for _ in range(layers):

        def bare(*args: Any, _inner: Callable[..., Any] = fn, **kwargs: Any) -> Any:
            return _inner(*args, **kwargs)

        fn = bare
    if counter is not None:
        inner = fn

        def counting(*args: Any, **kwargs: Any) -> Any:
            counter[0] += 1
            return inner(*args, **kwargs)

        fn = counting
    return fn


def bare_wrappers(cells: list[Any], layers: int, counter: list[int] | None = None) -> Any:
    """``patched(...)`` installing *layers* bare wrappers on every entry point graphaudit wraps."""
    from graphaudit.capture.network.patching import cell_call_owners, patched

    return patched(
        cell_call_owners(cells),
        lambda original: _chain(original, layers, counter),
        lambda site, original: _chain(original, layers, counter),
        lambda original: _chain(original, layers, counter),
    )


def _per_op(value: float, baseline: float, n: int, layers: int = 1) -> float:
    return (value - baseline) / layers / n * 1e6


def time_transformer(
    layers: int,
    hidden: int,
    heads: int,
    ffn: int,
    seq: int,
    vocab: int,
    repeats: int,
    amplify: int = 101,
) -> dict[str, Any]:
    """Time forward / traced capture / bare wrappers, interleaved; see the module docstring."""
    import mindspore as ms
    import numpy as np

    import graphaudit

    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.random.seed(0)
    net = build_lm(layers, hidden, heads, ffn, seq, vocab)
    ids = ms.Tensor(np.random.randint(0, vocab, (1, seq)).astype(np.int32))
    cells = [cell for _, cell in net.cells_and_names()]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20 * amplify + 2000))  # K nested wrappers a call

    def forward() -> None:
        net(ids).asnumpy()

    def under(k: int) -> Callable[[], float]:
        def run() -> float:
            with bare_wrappers(cells, k):
                start = time.perf_counter()
                net(ids).asnumpy()
                return time.perf_counter() - start

        return run

    def install() -> float:
        start = time.perf_counter()
        with bare_wrappers(cells, 1):
            pass
        return time.perf_counter() - start

    bare_k = f"bare x{amplify}"
    runs: dict[str, Callable[[], Any]] = {
        "forward": forward,
        "traced": lambda: graphaudit.to_networkx(net, inputs=ids),
        "bare": under(1),
        bare_k: under(amplify),
        "install": install,
        "structure": lambda: graphaudit.to_networkx(net),
    }
    for run in runs.values():  # warm-up: kernels, caches, the entry points found once
        run()
    seconds = interleave(runs, repeats, self_timed={"bare", bare_k, "install"})

    graph = graphaudit.to_networkx(net, inputs=ids)
    kinds: dict[str, int] = {}
    for _, data in graph.nodes(data=True):
        kinds[data["kind"]] = kinds.get(data["kind"], 0) + 1
    n = kinds.get("op", 0) + kinds.get("call", 0)
    counter = [0]
    with bare_wrappers(cells, 1, counter):
        net(ids).asnumpy()

    per_op: dict[str, dict[str, float]] = {}
    for label, pick in (("median", statistics.median), ("min", min)):
        t = {name: pick(times) for name, times in seconds.items()}
        per_op[label] = {
            "graphaudit_us": _per_op(t["traced"], t["forward"], n),
            "bare_us": _per_op(t[bare_k], t["bare"], n, amplify - 1),
            "bare_direct_us": _per_op(t["bare"], t["forward"], n),
        }
    return {
        "config": {
            "layers": layers,
            "hidden": hidden,
            "heads": heads,
            "ffn": ffn,
            "seq": seq,
            "vocab": vocab,
            "amplify": amplify,
        },
        "phases": {name: stats(times) for name, times in seconds.items()},
        "nodes": kinds,
        "traced_nodes": n,
        "wrapper_calls": counter[0],
        "cells": len(cells),
        "parameters": len(net.trainable_params()),
        "per_op": per_op,
    }
