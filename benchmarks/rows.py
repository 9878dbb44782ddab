"""The rows of the table for the model, scaling, render and memory groups (1-6); the rest in ``rows_extra``."""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.rows_extra import extra_rows
from benchmarks.settings import LINEAR_SLACK, MAX_NODES, MODES, TARGETS
from benchmarks.table import make_row, med_min, phase_of


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the table, computed from :func:`measure`'s results."""
    model = results["meta"]["model"]
    out: list[dict[str, Any]] = []
    if "model_time" in results:
        out.extend(_model_time_rows(results["model_time"], model))
    if "scale_time" in results and "scale_memory" in results:
        out.extend(_scale_rows(results))
    if "render" in results:
        out.append(_render_row(results["render"]))
    if "model_memory" in results:
        out.extend(_memory_rows(results["model_memory"], model))
    out.extend(extra_rows(results))
    return out


def _model_time_rows(mt: dict[str, Any], model: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seconds = mt["seconds"]
    forward = med_min(seconds["forward:inference"])
    out.append(
        make_row(
            f"1 {model} structure-only audit",
            "model_time",
            "s",
            med_min(seconds["structure"]),
            f"{model} forward, inference",
            forward,
            TARGETS["structure"],
        )
    )
    for mode in mt["modes"]:
        forward = med_min(seconds[f"forward:{mode}"])
        fwd_name = f"{model} forward, {mode}"
        out.append(
            make_row(
                f"2 {model} full audit, {mode} mode",
                "model_time",
                "s",
                med_min(seconds[f"full:{mode}"]),
                fwd_name,
                forward,
                TARGETS[f"full:{mode}"],
                note="audit(net, optimizer, inputs=x, loss_fn=nn.CrossEntropyLoss()), net.set_train("
                f"{mode == 'training'})",
            )
        )
        out.append(
            make_row(
                f"3 {model} full audit + SVG, {mode} mode",
                "model_time",
                "s",
                med_min(seconds[f"full+render:{mode}"]),
                fwd_name,
                forward,
                TARGETS[f"full+render:{mode}"],
                note=f"render alone {statistics.median(seconds[f'render:{mode}']):.2f} s, "
                f"{mt['graph_nodes'][mode]} graph nodes",
            )
        )
    return out


def _scale_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    st = results["scale_time"]
    phases = st["phases"]
    cells = {int(k): v for k, v in st["cells"].items()}
    params = {int(k): v for k, v in st["params"].items()}
    sizes = results["meta"]["sizes"]
    traced_sizes = results["meta"]["traced_sizes"]
    memory = {(m["cells"], m["traced"]): m["peak_rise_mib"] for m in results["scale_memory"]}
    for label, kind, group in (("structure", "structure", sizes), ("traced", "full", traced_sizes)):
        for small, large in zip(group, group[1:]):
            growth = cells[large] / cells[small]
            limit = round(LINEAR_SLACK * growth, 2)
            span = f"{cells[small]:,} -> {cells[large]:,} cells"
            out.append(
                make_row(
                    f"4 {label} audit time, {span}",
                    "scale_time",
                    "s",
                    phase_of(phases, f"{kind}:{large}"),
                    f"{cells[small]:,} cells",
                    phase_of(phases, f"{kind}:{small}"),
                    limit,
                    note=f"size x{growth:.2f}; params {params[small]:,} -> {params[large]:,}",
                )
            )
            out.append(
                make_row(
                    f"4 {label} audit peak memory, {span}",
                    "scale_memory",
                    "MiB",
                    (memory[(large, label == "traced")], None),
                    f"{cells[small]:,} cells",
                    (memory[(small, label == "traced")], None),
                    limit,
                    note=f"size x{growth:.2f}",
                )
            )
    for n in traced_sizes:
        out.append(
            make_row(
                f"4 traced audit vs forward, {cells[n]:,} cells",
                "scale_time",
                "s",
                phase_of(phases, f"full:{n}"),
                f"forward {cells[n]:,} cells",
                phase_of(phases, f"forward:{n}"),
                note="information: tracing cost on a network of tiny cells",
            )
        )
    return out


def _render_row(r: dict[str, Any]) -> dict[str, Any]:
    return make_row(
        f"5 render {r['cells']:,} cells (fallback)",
        "render",
        "s",
        phase_of(r["phases"], "render"),
        f"audit {r['cells']:,} cells",
        phase_of(r["phases"], "audit"),
        met=r["drawn"] <= MAX_NODES,
        note=f"{r['graph_nodes']:,} graph nodes drawn as {r['drawn']} at depth {r['depth']} (target: <= {MAX_NODES})",
    )


def _memory_rows(mem: dict[str, Any], model: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for mode in MODES:
        fwd_mib = mem[f"forward:{mode}"]["peak_rise_mib"]
        full_mem = mem[f"full:{mode}"]
        out.append(
            make_row(
                f"6 {model} full audit peak memory, {mode}",
                "model_memory",
                "MiB",
                (full_mem["peak_rise_mib"], None),
                f"{model} forward, {mode}",
                (fwd_mib, None),
                TARGETS["memory"],
                note="fresh process each: peak RSS rise over the built model (graphaudit's modules imported "
                f"before: {full_mem.get('import_mib', 0):.1f} MiB once per process, not counted)",
            )
        )
        out.append(
            make_row(
                f"6 {model} full audit after a forward, {mode}",
                "model_memory",
                "MiB",
                (mem[f"forward:{mode}"]["warm_full_mib"], None),
                f"{model} forward, {mode}",
                (fwd_mib, None),
                TARGETS["warm_memory"],
                note="extra peak RSS of the audit in a process that already ran the forward pass",
            )
        )
        if f"parts:{mode}" in mem:
            out.extend(_parts_rows(mem, model, mode))
    return out


def _parts_rows(mem: dict[str, Any], model: str, mode: str) -> list[dict[str, Any]]:
    """Information: the row "after a forward" taken apart (``model.memory_parts``, one process).

    An audit after one forward pass runs the second pass of the process (traced) and the
    loss's first run: MindSpore's own growth, measured plainly in the parts process. What is
    left of that row is graphaudit's part.
    """
    parts, python = mem[f"parts:{mode}"], mem.get(f"python:{mode}", {})
    fwd_name = f"{model} forward, {mode}"
    forward = (mem[f"forward:{mode}"]["peak_rise_mib"], None)
    warm = mem[f"forward:{mode}"]["warm_full_mib"]
    python_note = (
        f"; Python's allocations in such an audit (tracemalloc, another process): peak "
        f"{python['python_peak_mib']:.1f} MiB, kept with the report {python['python_kept_mib']:.1f} MiB"
        if "python_peak_mib" in python
        else ""
    )
    return [
        make_row(
            f"6 {model} after a forward: MindSpore's own growth, {mode}",
            "model_memory",
            "MiB",
            (parts["mindspore_mib"], None),
            fwd_name,
            forward,
            note="information, one process: a second plain forward pass "
            f"{parts['second_forward_mib']:.1f} MiB + the loss's first run {parts['loss_first_mib']:.1f} MiB "
            f"(its own first forward: {parts['forward_mib']:.1f} MiB)",
        ),
        make_row(
            f"6 {model} after a forward: graphaudit's part, {mode}",
            "model_memory",
            "MiB",
            (warm - parts["mindspore_mib"], None),
            fwd_name,
            forward,
            note=f"information: the audit after a forward ({warm:.1f} MiB) minus MindSpore's own growth; "
            f"an audit after that growth, in the parts process: {parts['audit_mib']:.1f} MiB (with a third "
            f"pass's own growth){python_note}",
        ),
    ]
