"""Run graphaudit.audit over every mindcv model that can be built here, and summarise.

Each unmodified model (``pretrained=False``) is audited with a correct optimizer
(``nn.Momentum(net.trainable_params(), 0.01, 0.9)``), ``nn.CrossEntropyLoss()``, a correct label (class indices below the model's
``num_classes``) and one small batch: 64x64 when the model accepts it, else its default size (``input_size`` of its mindcv
config, or a ``_224``/``_384`` suffix of its name), else 224. Models above ``--max-params``
parameters are skipped. Every model runs in a worker process with a timeout; a worker that
times out or dies is replaced.

What an unmodified model must give: no audit crash (any exception other than the network's own
forward failure) and no error-severity finding (each one is a false positive for the owner of
that check). Info findings are counted per check: how many models each reports on. Results are appended to ``results.jsonl`` as models finish (a re-run resumes),
and ``summary.json`` / ``summary.md`` are written from them.

Usage::

    GLOG_v=3 PYTHONPATH=. python scripts/audit_all_mindcv.py --out /tmp/mindcv-audit
    python scripts/audit_all_mindcv.py --out /tmp/mindcv-audit --summarize-only
    python scripts/audit_all_mindcv.py --models resnet18,swin_tiny --workers 1
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

MAX_PARAMS = 400_000_000
SMALL_SIZE = 64
BATCH = 2
DEFAULT_TIMEOUT = 480.0
RESTART_EVERY = 12  # models per worker process, bounding leaked memory

# ---------------------------------------------------------------------------- one model


def first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[0] if lines else ''}"[:300]


def default_size(name: str) -> int | None:
    """The input side the model is made for: its mindcv config, or a _224/_384 name suffix."""
    try:
        from mindcv.models.registry import get_pretrained_cfg

        size = (get_pretrained_cfg(name) or {}).get("input_size")
        if size:
            return int(size[-1])
    except Exception:
        pass
    match = re.search(r"_(96|128|160|192|224|240|256|288|299|320|384|448|512)(?:_|$)", name)
    return int(match.group(1)) if match else None


def candidate_sizes(name: str) -> list[int]:
    return list(dict.fromkeys(s for s in (SMALL_SIZE, default_size(name), 224, 256) if s))


def audit_model(name: str, *, max_params: int = MAX_PARAMS, sizes: list[int] | None = None) -> dict[str, Any]:
    """Build mindcv model *name* and audit it; a JSON-able record of what happened.

    ``status`` is one of ``ok`` (audited: see ``errors``/``warnings``), ``build_failed``,
    ``skipped`` (too large), ``forward_failed`` (the model's own forward pass fails at every
    size tried, without graphaudit too), or ``crash`` (graphaudit raised, or raised a
    ForwardError for a forward pass that runs fine on its own: a graphaudit bug).
    """
    import mindspore as ms
    import numpy as np
    from mindspore import Tensor, nn

    import graphaudit

    ms.set_context(mode=ms.PYNATIVE_MODE)
    record: dict[str, Any] = {"model": name, "status": None}
    start = time.perf_counter()
    try:
        import mindcv

        net = mindcv.create_model(name, pretrained=False)
    except Exception as err:
        record.update(
            status="build_failed", reason=first_line(err), seconds=round(time.perf_counter() - start, 1)
        )
        return record
    record["build_seconds"] = round(time.perf_counter() - start, 1)
    params = list(net.get_parameters())
    record["parameters"] = int(sum(int(p.size) for p in params))
    if record["parameters"] > max_params:
        record.update(
            status="skipped", reason=f"{record['parameters'] / 1e6:.0f}M parameters > {max_params / 1e6:.0f}M"
        )
        return record

    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    classes = int(getattr(net, "num_classes", 1000) or 1000)
    label = Tensor(np.random.default_rng(1).integers(0, classes, BATCH).astype(np.int32))
    tried: list[str] = []
    for size in sizes or candidate_sizes(name):
        x = Tensor(np.random.default_rng(0).random((BATCH, 3, size, size), dtype=np.float32))
        t0 = time.perf_counter()
        try:
            report = graphaudit.audit(net, optimizer, inputs=x, label=label, loss_fn=nn.CrossEntropyLoss())
        except graphaudit.ForwardError as err:
            cause = err.__cause__ or err
            try:  # is it the network's own failure at this size, or graphaudit's?
                net(x)
            except Exception:
                tried.append(f"{size}: {first_line(cause)}")
                continue
            record.update(
                status="crash",
                size=size,
                reason=f"ForwardError although net(x) runs on its own: {first_line(cause)}",
                traceback=traceback.format_exc(),
            )
            return record
        except Exception as err:
            record.update(status="crash", size=size, reason=first_line(err), traceback=traceback.format_exc())
            return record
        record.update(
            status="ok",
            size=size,
            audit_seconds=round(time.perf_counter() - t0, 1),
            checks_run=len(report.checks_run),
            skipped_checks=sorted(report.skipped),
            errors=[_finding(f) for f in report.of_severity("error")],
            warnings=[_finding(f) for f in report.of_severity("warning")],
            infos=sorted({f.check_id for f in report.of_severity("info")}),
            # GA340 (batch elements mix) runs on the batch of 2 in the probe's inference mode.
            dependency="ran"
            if "GA340" in report.checks_run
            else report.skipped.get("GA340", "?").split("could not be made: ", 1)[-1][:400],  # the reason
            dependency_findings=[f.check_id for f in report.findings if f.check_id.startswith("GA34")],
        )
        if tried:
            record["sizes_failed"] = tried
        return record
    record.update(status="forward_failed", reason="; ".join(tried))
    return record


def _finding(finding: Any) -> dict[str, str]:
    return {
        "check_id": finding.check_id,
        "name": finding.name,
        "subject": finding.subject,
        "message": finding.message[:400],
    }


# ---------------------------------------------------------------------------- workers


def _worker(conn: Any, max_params: int) -> None:
    os.environ.setdefault("GLOG_v", "3")
    while True:
        try:
            name = conn.recv()
        except EOFError:
            break
        if name is None:
            break
        try:
            result = audit_model(name, max_params=max_params)
        except BaseException as err:  # anything escaping audit_model is a script bug: report it
            result = {
                "model": name,
                "status": "crash",
                "reason": first_line(err),
                "traceback": traceback.format_exc(),
            }
        conn.send(result)
    conn.close()
    os._exit(0)  # skip MindSpore's noisy Cell.__del__ at interpreter exit


class Worker:
    def __init__(self, ctx: Any, max_params: int) -> None:
        self.ctx, self.max_params = ctx, max_params
        self.proc: Any = None
        self.conn: Any = None
        self.done = 0

    def start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.max_params), daemon=True)
        self.proc.start()
        child.close()
        self.conn, self.done = parent, 0

    def stop(self, force: bool = False) -> None:
        if self.proc is None:
            return
        if not force:
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        self.proc = None

    def run(self, name: str, timeout: float) -> dict[str, Any]:
        if self.proc is None or self.done >= RESTART_EVERY or not self.proc.is_alive():
            self.stop()
            self.start()
        start = time.perf_counter()
        self.conn.send(name)
        self.done += 1
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except EOFError:
                pass
        else:
            self.stop(force=True)
            return {"model": name, "status": "timeout", "reason": f"no result within {timeout:.0f} s"}
        self.proc.join(5)
        code = self.proc.exitcode
        self.stop(force=True)
        return {
            "model": name,
            "status": "crash",
            "reason": f"the worker process died (exit code {code}) after {time.perf_counter() - start:.0f} s",
        }


def cost_rank(name: str) -> int:
    """Rough cost order, so that cheap models finish first when time is short."""
    heavy = (
        "huge",
        "_h_",
        "_h1",
        "xlarge",
        "_xl",
        "large",
        "_l_",
        "_l2",
        "_l3",
        "_m48",
        "_m36",
        "senet154",
        "resnest269",
        "resnest200",
        "b7",
        "b6",
        "b5",
        "32gf",
        "16gf",
        "12gf",
        "x3",
        "nasnet",
        "pnasnet",
        "volo_d5",
        "volo_d4",
        "volo_d3",
        "_448",
        "_384",
        "152",
        "131",
        "107",
    )
    medium = (
        "base",
        "_b_",
        "b4",
        "b3",
        "101",
        "8_0gf",
        "6_4gf",
        "4_0gf",
        "medium",
        "_m_",
        "volo",
        "dpn",
        "hrnet",
        "cait",
        "_b2",
        "_b3",
        "b1",
    )
    if any(h in name for h in heavy):
        return 2
    return 1 if any(m in name for m in medium) else 0


def run_all(
    models: list[str],
    out: Path,
    *,
    workers: int,
    timeout: float,
    max_params: int,
    deadline: float | None,
    rerun: tuple[str, ...] = (),
) -> None:
    results_path = out / "results.jsonl"
    done = {r["model"] for r in load_results(results_path) if r["status"] not in rerun}
    todo = sorted((m for m in models if m not in done), key=lambda m: (cost_rank(m), models.index(m)))
    print(f"{len(done)} models already done, {len(todo)} to run with {workers} workers", flush=True)
    lock = threading.Lock()
    queue = list(todo)
    ctx = mp.get_context("spawn")

    def loop() -> None:
        worker = Worker(ctx, max_params)
        try:
            while True:
                with lock:
                    if not queue or (deadline is not None and time.time() > deadline):
                        return
                    name = queue.pop(0)
                start = time.perf_counter()
                result = worker.run(name, timeout)
                result.setdefault("wall_seconds", round(time.perf_counter() - start, 1))
                with lock:
                    with results_path.open("a", encoding="utf-8") as file:
                        file.write(json.dumps(result) + "\n")
                    extra = ""
                    if result["status"] == "ok":
                        extra = f" size={result['size']} errors={len(result['errors'])} warnings={len(result['warnings'])}"
                    elif result.get("reason"):
                        extra = f" {result['reason'][:150]}"
                    print(f"[{time.strftime('%H:%M:%S')}] {name}: {result['status']}{extra}", flush=True)
        finally:
            worker.stop()

    threads = [threading.Thread(target=loop) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if queue:
        print(f"deadline reached: {len(queue)} models not run", flush=True)


# ---------------------------------------------------------------------------- summary


def load_results(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    latest: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            latest[record["model"]] = record
    return list(latest.values())


def summarize(models: list[str], out: Path) -> dict[str, Any]:
    results = {r["model"]: r for r in load_results(out / "results.jsonl")}
    by_status: dict[str, list[dict[str, Any]]] = {}
    for record in results.values():
        by_status.setdefault(record["status"], []).append(record)
    audited = by_status.get("ok", [])
    false_positives = [{"model": r["model"], **f} for r in audited for f in r["errors"]]
    warnings = [{"model": r["model"], **f} for r in audited for f in r["warnings"]]
    summary = {
        "models_listed": len(models),
        "models_attempted": len(results),
        "not_attempted": sorted(set(models) - set(results)),
        "counts": {status: len(records) for status, records in sorted(by_status.items())},
        "audited": sorted(r["model"] for r in audited),
        "audited_at_size": {r["model"]: r["size"] for r in audited},
        "could_not_build": {r["model"]: r["reason"] for r in by_status.get("build_failed", [])},
        "skipped_too_large": {r["model"]: r["reason"] for r in by_status.get("skipped", [])},
        "forward_failed": {r["model"]: r["reason"] for r in by_status.get("forward_failed", [])},
        "timeouts": {r["model"]: r["reason"] for r in by_status.get("timeout", [])},
        "crashes": {
            r["model"]: {"reason": r["reason"], "traceback": r.get("traceback", "")}
            for r in by_status.get("crash", [])
        },
        "false_positive_errors": false_positives,
        "warnings": warnings,
        "info_models_per_check": _models_per_check(audited),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "summary.md").write_text(markdown(summary), encoding="utf-8")
    return summary


def _models_per_check(audited: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in audited:
        for check_id in record.get("infos", []):
            counts[check_id] = counts.get(check_id, 0) + 1
    return dict(sorted(counts.items()))


def markdown(s: dict[str, Any]) -> str:
    lines = [
        "# graphaudit over every mindcv model",
        "",
        f"{s['models_listed']} models listed, {s['models_attempted']} attempted, "
        f"{len(s['not_attempted'])} not attempted (time limit).",
        "",
        "| status | models |",
        "| --- | --- |",
        *(f"| {k} | {v} |" for k, v in s["counts"].items()),
        "",
        f"## Error findings on unmodified models (false positives): {len(s['false_positive_errors'])}",
        "",
    ]
    lines += [
        f"- `{f['model']}` {f['check_id']} {f['name']} `{f['subject']}`: {f['message']}"
        for f in s["false_positive_errors"]
    ] or ["None."]
    lines += ["", f"## Audit crashes: {len(s['crashes'])}", ""]
    for model, crash in s["crashes"].items():
        lines += [f"### {model}", "", crash["reason"], "", "```", crash["traceback"].rstrip(), "```", ""]
    if not s["crashes"]:
        lines.append("None.")
    lines += ["", f"## Warning findings: {len(s['warnings'])}", ""]
    lines += [f"- `{f['model']}` {f['check_id']} {f['name']} `{f['subject']}`" for f in s["warnings"]] or [
        "None."
    ]
    infos = s.get("info_models_per_check", {})
    lines += ["", f"## Info findings: models each check reports on ({len(s['audited'])} audited)", ""]
    lines += [f"- {check_id}: {count}" for check_id, count in infos.items()] or ["None."]
    for title, key in (
        ("Could not be built", "could_not_build"),
        ("Skipped (too large)", "skipped_too_large"),
        ("Forward pass fails without graphaudit too", "forward_failed"),
        ("Timeouts", "timeouts"),
    ):
        lines += ["", f"## {title}: {len(s[key])}", ""]
        lines += [f"- `{m}`: {reason}" for m, reason in sorted(s[key].items())] or ["None."]
    lines += ["", "## Audited", "", ", ".join(f"{m} ({s['audited_at_size'][m]})" for m in s["audited"]), ""]
    if s["not_attempted"]:
        lines += ["## Not attempted", "", ", ".join(s["not_attempted"]), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=Path("mindcv-audit"), help="folder for results and summaries"
    )
    parser.add_argument("--models", default="", help="comma-separated model names (default: all of mindcv)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per model")
    parser.add_argument("--max-params", type=int, default=MAX_PARAMS)
    parser.add_argument(
        "--minutes", type=float, default=None, help="stop starting new models after this long"
    )
    parser.add_argument(
        "--rerun", default="", help="comma-separated statuses to run again, e.g. crash,timeout"
    )
    parser.add_argument("--summarize-only", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("GLOG_v", "3")
    import mindcv

    models = [m for m in args.models.split(",") if m] or list(mindcv.list_models())
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.summarize_only:
        deadline = time.time() + args.minutes * 60 if args.minutes else None
        run_all(
            models,
            args.out,
            workers=args.workers,
            timeout=args.timeout,
            max_params=args.max_params,
            deadline=deadline,
            rerun=tuple(s for s in args.rerun.split(",") if s),
        )
    summary = summarize(models, args.out)
    print(
        json.dumps(summary["counts"]),
        f"false positives: {len(summary['false_positive_errors'])}",
        f"crashes: {len(summary['crashes'])}",
        f"-> {args.out / 'summary.md'}",
    )
    return 1 if summary["crashes"] or summary["false_positive_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
