"""Scale without weights: a LLaMA-7B-shaped network built under ``no_init_parameters()``, audited structure-only.

The network (:func:`build_llama`) has the shape of LLaMA-7B, from ``mindspore.nn`` cells: a
32,000 x 4,096 ``Embedding``, 32 layers of 7 ``Dense`` without bias (q, k, v, o: 4,096 ->
4,096; gate, up: 4,096 -> 11,008; down: 11,008 -> 4,096) and 2 ``LayerNorm``, a final
``LayerNorm`` and a 4,096 -> 32,000 ``lm_head``: 356 parameters, 6.7 billion elements (25 GiB
in float32). Built inside ``mindspore.nn.utils.no_init_parameters()``, none of those weights
is allocated; an audit must keep it that way.

``lazy_audit`` (one fresh process, after a warm-up audit of a tiny network for the imports):

1. peak-RSS rise of building the network (the baseline), then of its first structure-only
   ``graphaudit.audit(net)`` (the row: a few MiB at most, the weights are never read);
2. the time of building and of auditing, interleaved, ``repeats`` times (a new network is
   built each time; the audited one stays the first);
3. invariants, reported in the benchmark output and failing it when broken (not timings):
   every parameter still ``has_init`` (uninitialised) after the audits, and the report lists
   GA601, GA602 and GA603 (the checks that read weight values) in ``report.not_run`` with a
   reason that says the weights are not initialised.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import interleave, peak_rise_mib, stats

LLAMA_7B = {"layers": 32, "hidden": 4096, "ffn": 11008, "vocab": 32000}
VALUE_CHECKS = ("GA601", "GA602", "GA603")


def build_llama(layers: int, hidden: int, ffn: int, vocab: int) -> Any:
    """The LLaMA-shaped network of the module docstring (call it under ``no_init_parameters()``)."""
    from mindspore import nn, ops

    class DecoderLayer(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.input_norm = nn.LayerNorm((hidden,))
            self.q_proj = nn.Dense(hidden, hidden, has_bias=False)
            self.k_proj = nn.Dense(hidden, hidden, has_bias=False)
            self.v_proj = nn.Dense(hidden, hidden, has_bias=False)
            self.o_proj = nn.Dense(hidden, hidden, has_bias=False)
            self.post_norm = nn.LayerNorm((hidden,))
            self.gate_proj = nn.Dense(hidden, ffn, has_bias=False)
            self.up_proj = nn.Dense(hidden, ffn, has_bias=False)
            self.down_proj = nn.Dense(ffn, hidden, has_bias=False)

        def construct(self, x: Any) -> Any:
            h = self.input_norm(x)
            scores = ops.softmax(ops.matmul(self.q_proj(h), ops.swapaxes(self.k_proj(h), -1, -2)), axis=-1)
            x = x + self.o_proj(ops.matmul(scores, self.v_proj(h)))
            h = self.post_norm(x)
            return x + self.down_proj(ops.silu(self.gate_proj(h)) * self.up_proj(h))

    class Llama(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.embed_tokens = nn.Embedding(vocab, hidden)
            self.layers = nn.CellList([DecoderLayer() for _ in range(layers)])
            self.norm = nn.LayerNorm((hidden,))
            self.lm_head = nn.Dense(hidden, vocab, has_bias=False)

        def construct(self, ids: Any) -> Any:
            x = self.embed_tokens(ids)
            for layer in self.layers:
                x = layer(x)
            return self.lm_head(self.norm(x))

    return Llama()


def build_lazy(layers: int, hidden: int, ffn: int, vocab: int) -> Any:
    from mindspore import nn

    with nn.utils.no_init_parameters():
        return build_llama(layers, hidden, ffn, vocab)


def invariants(net: Any, report: Any) -> dict[str, Any]:
    """What must hold after the audit (see the module docstring), each with what was seen."""
    params = list(net.get_parameters())
    initialised = [p.name for p in params if not p.has_init]
    not_run = {n.check_id: n for n in report.not_run}
    reasons = {cid: (not_run[cid].reason or "") if cid in not_run else None for cid in VALUE_CHECKS}
    listed = all(reason is not None and "initialis" in reason.lower() for reason in reasons.values())
    return {
        "weights_uninitialised": not initialised,
        "initialised_after_audit": initialised[:5],
        "parameters": len(params),
        "value_checks_not_run": listed,
        "value_check_reasons": reasons,
    }


def lazy_audit(layers: int, hidden: int, ffn: int, vocab: int, repeats: int) -> dict[str, Any]:
    import mindspore as ms
    from mindspore import nn

    import graphaudit

    ms.set_context(mode=ms.PYNATIVE_MODE)
    graphaudit.audit(nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()]))  # warm-up: imports, check modules
    build_mib, build_reset, net = peak_rise_mib(lambda: build_lazy(layers, hidden, ffn, vocab))
    start = time.perf_counter()
    audit_mib, audit_reset, report = peak_rise_mib(lambda: graphaudit.audit(net))
    first_s = time.perf_counter() - start
    runs = {
        "build": lambda: build_lazy(layers, hidden, ffn, vocab),
        "audit": lambda: graphaudit.audit(net),
    }
    seconds = interleave(runs, repeats)
    return {
        "config": {"layers": layers, "hidden": hidden, "ffn": ffn, "vocab": vocab},
        "elements": sum(int(p.size) for p in net.get_parameters()),
        "cells": sum(1 for _ in net.cells_and_names()),
        "graph_nodes": report.graph.number_of_nodes(),
        "findings": len(report.findings),
        "first_audit_s": first_s,
        "build_mib": build_mib,
        "audit_mib": audit_mib,
        "peak_reset": build_reset and audit_reset,
        "phases": {name: stats(times) for name, times in seconds.items()},
        "invariants": invariants(net, report),
    }
