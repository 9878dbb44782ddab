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
        if "units" in results["model_time"]:
            out.extend(_unit_rows(results["model_time"], model))
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


def _per_unit(seconds: list[float], count: int) -> tuple[float | None, float | None]:
    """Median and minimum of *seconds* in microseconds per unit of work (None when there is none)."""
    if count <= 0:
        return None, None
    median, least = med_min(seconds)
    return median * 1e6 / count, least * 1e6 / count


def _unit_rows(mt: dict[str, Any], model: str) -> list[dict[str, Any]]:
    """Rows 1u-2u: the audit's own work per unit it works through, in microseconds (issue 40).

    The ratios of rows 1-3 move with the speed of the kernels: the same audit is 1.1x a forward
    pass where a resnet50 pass takes 4 s and 2.2x where it takes 0.34 s. These rows divide the
    audit's own time (the full audit minus the forward pass of the same repeat, the structure
    audit, the checks) by what it worked through, so a fast machine neither hides nor
    exaggerates it; the baseline is the forward pass's kernel time per the same unit.
    """
    seconds, units = mt["seconds"], mt["units"]
    out: list[dict[str, Any]] = []
    inference = units[mt["modes"][-1]]
    structure = seconds["structure"]
    out.append(
        make_row(
            f"1u {model} structure-only audit per parameter",
            "model_time",
            "us",
            _per_unit(structure, inference["parameters"]),
            "forward per parameter",
            _per_unit(seconds["forward:inference"], inference["parameters"]),
            TARGETS["per_parameter_us"],
            on="value",
            note=f"{inference['parameters']} parameters, {inference['cells']} cells",
        )
    )
    if "full:tiny" in seconds:
        # the cells and calls of the 224x224 pass on a 32x32 input, training mode: the forward pass's
        # kernels shrink ~50x, the audit's own work (per call, per parameter, per check) does not;
        # the graph's op nodes are only the functional operations outside cells, too few to divide by
        calls = units["tiny"]["calls"]
        forward = seconds["forward:tiny"]
        own = [max(full - fwd, 0.0) for full, fwd in zip(seconds["full:tiny"], forward)]
        out.append(
            make_row(
                f"2u {model} audit's own work per traced cell call",
                "model_time",
                "us",
                _per_unit(own, calls),
                "forward per traced cell call",
                _per_unit(forward, calls),
                TARGETS["per_call_us"],
                on="value",
                note=f"(full audit - forward, repeat by repeat) / {calls} calls; training mode, input "
                "1x3x32x32 (the same calls, kernels ~50x shorter); ratio: the audit on top of a forward "
                "pass whose kernels are that fast",
            )
        )
    checks = mt.get("check_seconds", {}).get("full", {})
    timed = {key: value for key, value in checks.items() if key.startswith("GA")}
    if timed:
        ran = len(timed)
        total = sum(timed.values())
        out.append(
            make_row(
                f"2u {model} checks, per check run",
                "model_time",
                "us",
                (total * 1e6 / ran, None),
                "forward per check",
                _per_unit(seconds["forward:training"], ran)
                if "forward:training" in seconds
                else (None, None),
                TARGETS["per_check_us"],
                on="value",
                note=f"{ran} checks, {total * 1e3:.0f} ms in all (one run); the slowest: "
                + ", ".join(
                    f"{key} {value * 1e3:.1f} ms"
                    for key, value in sorted(timed.items(), key=lambda kv: -kv[1])[:3]
                ),
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
