"""The rows of the table for the LM, LLaMA-shaped, start-up, probe, dependency, watch and reference= groups (7-14)."""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.settings import TARGETS
from benchmarks.table import make_row, med_min, phase_of


def extra_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows 7 onwards, from :func:`benchmarks.groups.measure`'s results."""
    out: list[dict[str, Any]] = []
    for key, make in (("transformer", _transformer_rows), ("lazy", _lazy_rows), ("startup", _startup_rows)):
        if key in results:  # absent when run.py --only left the group out
            out.extend(make(results[key]))
    if "probe" in results:
        out.extend(_probe_rows(results["probe"]))
    for kind in ("cnn", "decoder"):
        if f"dependency_{kind}" in results:
            out.extend(_dependency_rows(results[f"dependency_{kind}"]))
    if "reference_time" in results:
        out.extend(_reference_time_rows(results["reference_time"]))
    if "reference_memory" in results:
        out.extend(_reference_memory_rows(results["reference_memory"]))
    if "watch_time" in results and "watch_memory" in results:
        out.extend(_watch_rows(results["watch_time"], results["watch_memory"], results["meta"]))
    if "watch_graph" in results and "skipped" not in results["watch_graph"]:
        out.extend(_watch_rows(results["watch_graph"], None, results["meta"], "GRAPH_MODE "))
    if "watch_msrun" in results and "skipped" not in results["watch_msrun"]:
        out.append(_watch_msrun_row(results["watch_msrun"]))
    if "anchor" in results and "skipped" not in results["anchor"]:
        out.append(_anchor_row(results["anchor"]))
    return out


def _watch_rows(
    t: dict[str, Any], mem: dict[str, Any] | None, meta: dict[str, Any], mode: str = ""
) -> list[dict[str, Any]]:
    """Row 12: the watched epochs' times against the unwatched (in *mode*), and the memory when measured."""
    seconds = t["seconds"]
    plain = med_min(seconds["plain"])
    shape = f"1 epoch of {meta['watch_steps']} steps, batches of 8"
    out = [
        make_row(
            f"12 {mode}Model.train resnet18, Watch() {label}",
            "watch_graph" if mode else "watch_time",
            "s",
            med_min(seconds[name]),
            "Model.train, no Watch",
            plain,
            TARGETS[target],
            note=f"{shape}; {note}",
        )
        for name, label, target, note in (
            ("default", "default", "watch_default", "Watch(fail_on='never'): sampled every 50 steps"),
            (
                "every step",
                "every=1",
                "watch_every",
                "Watch(every=1): weights copied, gradients read each step",
            ),
        )
    ]
    if mem is None:
        return out
    watched, unwatched = mem["watched"], mem["plain"]
    out.append(
        make_row(
            "12 Watch(every=1) extra peak memory",
            "watch_memory",
            "MiB",
            (watched["rise_mib"] - unwatched["rise_mib"], None),
            "unwatched training's peak",
            (unwatched["peak_mib"], None),
            TARGETS["watch_memory"],
            note=f"peak RSS rise of a watched epoch {watched['rise_mib']:.1f} MiB vs unwatched "
            f"{unwatched['rise_mib']:.1f} MiB, each in a fresh process, after one epoch",
        )
    )
    return out


def _watch_msrun_row(m: dict[str, Any]) -> dict[str, Any]:
    seconds, machine = m["seconds"], m["machine"]
    return make_row(
        "12 watch under msrun, Watch() default",
        "watch_msrun",
        "s",
        med_min(seconds["watched"]),
        "unwatched distributed epoch",
        med_min(seconds["plain"]),
        TARGETS["watch_msrun"],
        note=f"{m['world']} ranks of one msrun job, DATA_PARALLEL Model.train of an MLP (width {m['width']}), "
        f"1 epoch of {m['steps']} steps of {m['batch']} a rank, {len(seconds['plain'])} interleaved repeats "
        f"(rank 0's times); {machine['cpu_count']} CPUs {machine['machine']}, MindSpore {machine['mindspore']}",
    )


def _anchor_row(a: dict[str, Any]) -> dict[str, Any]:
    versions = ", ".join(f"{k} {v}" for k, v in a["versions"].items())
    return make_row(
        "13 torchview draw_graph, torchvision resnet50",
        "anchor",
        "s",
        med_min(a["seconds"]["draw_graph"]),
        "torch resnet50 forward",
        med_min(a["seconds"]["forward"]),
        note=f"information, beside rows 2-3: input {tuple(a['input_shape'])}, {a['threads']} torch threads; "
        f"{versions}; interpreter {a['python']}",
    )


def _dependency_rows(d: dict[str, Any]) -> list[dict[str, Any]]:
    """Row 11 against each baseline: a forward pass in inference mode, and one in training mode."""
    seconds = d["seconds"]
    shapes = " and ".join("x".join(map(str, shape)) for shape in d.get("input_shapes", []))
    note = f"input {shapes}; {d['passes']} passes; found: {', '.join(d['found'] or []) or 'nothing'}" + (
        f"; failed: {d['failure']}" if d.get("failure") else ""
    )
    return [
        make_row(
            f"11 dependency probe, {d['model']}",
            f"dependency_{d['kind']}",
            "s",
            med_min(seconds["dependency probe"]),
            f"forward pass ({mode})",
            med_min(seconds[baseline]),
            TARGETS["dependency"],
            note=note,
        )
        for mode, baseline in (("inference", "forward"), ("training", "forward (training)"))
        if baseline in seconds  # results of an older run have the inference baseline only
    ]


def _probe_rows(p: dict[str, Any]) -> list[dict[str, Any]]:
    seconds = p["seconds"]
    step = med_min(seconds["training step"])
    name = f"{p['model']} training step"
    return [
        make_row(
            f"10 {p['model']} audit with probe={steps}",
            "probe",
            "s",
            med_min(seconds[f"probe={steps}"]),
            name,
            step,
            round(steps + TARGETS["probe_extra_steps"], 2),
            note="the cost in training steps of the same batch: N steps and one traced forward pass "
            f"(full audit without a probe {statistics.median(seconds['full audit']):.2f} s)",
        )
        for steps in (1, p["steps"])
    ]


def _transformer_rows(t: dict[str, Any]) -> list[dict[str, Any]]:
    c = t["config"]
    shape = f"{c['layers']} layers, hidden {c['hidden']}, 1x{c['seq']} tokens"
    per_op = t["per_op"]
    bare_ok = per_op["median"]["bare_us"] > 0
    notes = [
        f"{shape}: {t['traced_nodes']} traced ops ({t['nodes'].get('op', 0)} op + {t['nodes'].get('call', 0)} "
        f"call nodes), {t['wrapper_calls']} wrapper calls a pass",
        f"bare = one more no-op wrapper layer (x{c['amplify']} nested / 1, per node); "
        f"bare - forward directly: {per_op['median']['bare_direct_us']:.1f} / {per_op['min']['bare_direct_us']:.1f} us",
        f"installing + removing the bare wrappers {t['phases']['install']['median_s'] * 1e3:.1f} ms (not in 'bare'); "
        f"structure-only capture {t['phases']['structure']['median_s'] * 1e3:.1f} ms (in 'traced')",
    ]
    if not bare_ok:
        notes.append("the bare wrapper's overhead is below the noise of this run: no ratio")
    rows_ = [
        make_row(
            "7 LM tracing overhead per traced op",
            "transformer",
            "us",
            (per_op["median"]["graphaudit_us"], per_op["min"]["graphaudit_us"]),
            "bare no-op wrapper",
            (
                per_op["median"]["bare_us"] if bare_ok else None,
                per_op["min"]["bare_us"] if per_op["min"]["bare_us"] > 0 else None,
            ),
            TARGETS["per_op"],
            note="\n".join(notes),
        ),
        make_row(
            "7 LM traced capture vs forward",
            "transformer",
            "s",
            phase_of(t["phases"], "traced"),
            "LM forward",
            phase_of(t["phases"], "forward"),
            note="information: to_networkx(net, inputs=ids) / net(ids).asnumpy()",
        ),
    ]
    return rows_


def _lazy_rows(lz: dict[str, Any]) -> list[dict[str, Any]]:
    inv = lz["invariants"]
    c = lz["config"]
    holds = inv["weights_uninitialised"] and inv["value_checks_not_run"]
    shape = f"{c['layers']} layers, hidden {c['hidden']}, FFN {c['ffn']}, vocab {c['vocab']}"
    verdict = (
        f"invariants: weights still uninitialised ({inv['parameters']} parameters has_init): "
        f"{'yes' if inv['weights_uninitialised'] else 'NO'}; GA601-GA603 not run, reason 'not initialised': "
        f"{'yes' if inv['value_checks_not_run'] else 'NO'}"
    )
    return [
        make_row(
            "8 LLaMA-shaped structure-only audit",
            "lazy",
            "s",
            phase_of(lz["phases"], "audit"),
            "building it",
            phase_of(lz["phases"], "build"),
            TARGETS["lazy_time"],
            met=holds,
            missed_by=None if holds else "invariant broken",
            note=f"{shape}: {lz['elements'] / 1e9:.2f} G elements, {lz['cells']} cells; "
            f"first audit in the process {lz['first_audit_s']:.3f} s\n{verdict}",
        ),
        make_row(
            "8 LLaMA-shaped audit peak memory",
            "lazy",
            "MiB",
            (lz["audit_mib"], None),
            "building it",
            (lz["build_mib"], None),
            TARGETS["lazy_mib"],
            on="value",
            met=holds,
            missed_by=None if holds else "invariant broken",
            note="peak RSS rise of the first audit (the weights would be 25 GiB)",
        ),
    ]


def _startup_rows(s: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    baseline = phase_of(s["phases"], "python -c pass")
    for name, checked in s["imports"].items():
        clean = not checked["mindspore_imported"] and s["exit_codes"].get(name) == 0
        failure = "imports mindspore" if checked["mindspore_imported"] else "failed"
        slowest = ", ".join(f"{m} {us / 1e3:.0f} ms" for m, us in checked["slowest"][:3])
        out.append(
            make_row(
                f"9 start-up: graphaudit {name}",
                "startup",
                "s",
                phase_of(s["phases"], name),
                "python -c pass",
                baseline,
                TARGETS["startup_s"],
                on="value",
                met=clean,
                missed_by=None if clean else failure,
                note=f"mindspore imported: {'YES' if checked['mindspore_imported'] else 'no'}; "
                f"{checked['modules']} modules; slowest imports: {slowest}",
            )
        )
    return out


def _difference(a: list[float], b: list[float]) -> tuple[float, float]:
    """*a* minus *b*, of their medians and of their minimums."""
    return statistics.median(a) - statistics.median(b), min(a) - min(b)


def _reference_time_rows(by_route: dict[str, Any]) -> list[dict[str, Any]]:
    """Row 14: what reference= adds to the audit, against one pass of the port and one run of the original."""
    out = []
    for route, r in by_route.items():
        seconds = r["seconds"]
        original = "onnxruntime" if route == "onnx" else "reading the dump"
        baseline = (
            statistics.median(seconds["forward"]) + statistics.median(seconds[original]),
            min(seconds["forward"]) + min(seconds[original]),
        )
        shapes = " and ".join("x".join(map(str, shape)) for shape in r["input_shapes"])
        said = "GA640 run" if r["ga640_run"] else f"GA640 not run: {r['not_run']}"
        out.append(
            make_row(
                f"14 reference= ({route}), {r['model']}: extra audit time",
                "reference_time",
                "s",
                _difference(seconds["audit + reference"], seconds["audit"]),
                f"forward pass + {original}",
                baseline,
                TARGETS["reference"],
                note=f"input {shapes}; {said}; findings: {', '.join(r['findings']) or 'none'}",
            )
        )
    return out


def _reference_memory_rows(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Row 14: the extra peak RSS of reference=, against every activation of both models held at once."""
    out = []
    for batch in sorted({r["batch"] for r in runs}):
        of = {r["phase"]: r for r in runs if r["batch"] == batch}
        if {"plain", "reference"} - set(of):
            continue
        both = 2 * of["reference"]["activations_mib"]
        extra = of["reference"]["peak_rise_mib"] - of["plain"]["peak_rise_mib"]
        out.append(
            make_row(
                f"14 reference= (dump), {of['reference']['model']} batch {batch}: extra peak memory",
                "reference_memory",
                "MiB",
                (extra, extra),
                "every activation of both models",
                (both, both),
                TARGETS["reference_memory"],
                note=f"the original's weights {of['reference']['weights_mib']:.0f} MiB (the port's are saved "
                "to be restored)",
            )
        )
    return out
