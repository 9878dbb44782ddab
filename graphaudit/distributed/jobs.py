"""Real data-parallel jobs for samples and tests: one ``msrun`` launch runs many scenarios.

A distributed sample (``samples/<ID>/bad.py`` of GA8xx, GA96x) is a real two-rank job: it
defines ``rank_worker(out)``, run on every rank of an ``msrun`` job with communication
initialised, which writes what the sample's ``build()`` reads (fingerprint files, a watch's
record). Starting a job costs seconds per worker (``init()`` alone takes 5-7 s on a 2-core
CPU machine), so :func:`sample_folder` starts **one** job for every distributed sample found
beside the asking one, runs their workers one after the other on both ranks, and caches the
folders for the rest of the process (removed when it exits).

Between scenarios the job resets what a scenario may set: the auto-parallel context, the
execution mode and the global seeds. A scenario that raises writes ``error.txt`` in its
folder on that rank, and :func:`sample_folder` raises it with the log's tail.

Example:
    >>> msrun_executable().endswith("msrun")
    True
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

from graphaudit.errors import GraphAuditError

__all__ = ["WORKER", "distributed_samples", "msrun_executable", "run_msrun", "sample_folder"]

#: The function a distributed sample defines, run on every rank.
WORKER = "rank_worker"


def msrun_executable() -> str:
    """The ``msrun`` beside this interpreter (a virtualenv's), else the one on ``PATH``."""
    beside = Path(sys.executable).parent / "msrun"
    found = str(beside) if beside.exists() else shutil.which("msrun")
    if found is None:
        raise GraphAuditError("msrun (MindSpore's launcher) is not installed: pip install mindspore")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_msrun(
    script: Path, args: Sequence[str], folder: Path, *, workers: int = 2, timeout: float = 900
) -> None:
    """Run ``msrun --worker_num=workers script args...`` with its logs in ``folder/logs``.

    The workers see this process's ``sys.path`` as ``PYTHONPATH`` and the virtualenv's
    ``bin`` first on ``PATH`` (msrun starts them with plain ``python``). A failed or
    timed-out job raises :class:`~graphaudit.errors.GraphAuditError` with the logs' tails.
    """
    command = [
        msrun_executable(),
        f"--worker_num={workers}",
        f"--local_worker_num={workers}",
        f"--master_port={_free_port()}",
        "--join=True",
        f"--log_dir={folder}/logs",
        str(script),
        *args,
    ]
    env = {
        **os.environ,
        "GLOG_v": "3",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        "PATH": os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", ""))),
    }
    try:
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        raise GraphAuditError(f"the msrun job did not end within {timeout:g} s{_logs(folder)}") from err
    if done.returncode != 0:
        raise GraphAuditError(
            f"the msrun job failed ({done.returncode}): {done.stderr[-1500:]}{_logs(folder)}"
        )


def _logs(folder: Path) -> str:
    tails = [
        f"\n--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
        for p in sorted(Path(folder, "logs").glob("*.log"))
    ]
    return "".join(tails)


def distributed_samples(root: Path) -> tuple[Path, ...]:
    """The sample files under *root* (``GA*/*.py``) that define a ``rank_worker``, in name order.

    Found by reading the files' text: nothing is imported or run to find them.
    """
    marker = f"def {WORKER}("
    return tuple(
        sorted(p.resolve() for p in root.glob("GA*/*.py") if marker in p.read_text(encoding="utf-8"))
    )


def _folder_of(out: Path, sample: Path) -> Path:
    return out / sample.parent.name / sample.stem


@functools.cache
def _job(samples: tuple[Path, ...]) -> Path:
    out = Path(tempfile.mkdtemp(prefix="graphaudit-msrun-"))
    atexit.register(shutil.rmtree, out, True)
    run_msrun(Path(__file__), [str(out), *map(str, samples)], out)
    return out


def sample_folder(sample: str | os.PathLike[str]) -> Path:
    """The folder *sample*'s ``rank_worker`` wrote into, in one job shared by its siblings.

    The first call in a process runs every distributed sample beside *sample* (under the
    folder above its ``GA*`` folder) in one ``msrun`` job; later calls return at once.
    """
    path = Path(sample).resolve()
    samples = distributed_samples(path.parent.parent)
    if path not in samples:
        samples = (path,)
    folder = _folder_of(_job(samples), path)
    errors = sorted(folder.glob("error*.txt"))
    if errors:
        raise GraphAuditError(
            f"{path.parent.name}/{path.name} failed in the msrun job:\n{errors[0].read_text()}"
        )
    return folder


def _reset() -> None:
    """What one scenario may have set, back to the defaults before the next."""
    import mindspore as ms
    import mindspore.dataset as ds

    ms.reset_auto_parallel_context()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    ds.config.set_seed(0)


def _run_scenarios(out: Path, samples: Sequence[Path]) -> None:
    from mindspore.communication import get_rank, init

    init()
    rank = get_rank()
    for sample in samples:
        folder = _folder_of(out, sample)
        folder.mkdir(parents=True, exist_ok=True)
        _reset()
        try:
            spec = importlib.util.spec_from_file_location(
                f"_rank_sample_{sample.parent.name}_{sample.stem}", sample
            )
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            getattr(module, WORKER)(folder)
        except Exception:
            (folder / f"error{rank}.txt").write_text(traceback.format_exc(), encoding="utf-8")
    _reset()


if __name__ == "__main__":
    del sys.path[0]  # this file's folder: its module names must not shadow the package's
    _run_scenarios(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
