import os
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("GLOG_v", "3")  # MindSpore's C++ warnings would drown pytest's output

sys.path.insert(0, str(Path(__file__).parent))  # so tests can import the shared nets module

from seeds import seed_everything  # found through the path set just above

# Scripts the tests run in processes of their own: not test modules, and not importable
# without their command-line arguments (--doctest-modules would import them).
collect_ignore = ["probe_fault_twin.py", "state_twin.py"]

try:  # Hypothesis keeps its example database and caches in ./.hypothesis, the checkout, from collection on
    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "graphaudit-hypothesis")
    settings.register_profile("graphaudit", database=None)
    settings.load_profile("graphaudit")
except ImportError:  # the smoke run on the oldest MindSpore has no Hypothesis
    pass


#: How this process dispatches MindSpore's PyNative kernels. MindSpore queues them by default
#: (what users run) and every wait on that queue is slow on a loaded CPU: a small MLP's training
#: step took 13-17 ms queued and 3 ms dispatched synchronously (issue 40), and most tests are
#: small trainings. So most tests run synchronously. Those marked ``asynchronous`` (the audit's
#: restores around the queue, kernels that fail late in it, threads, the never-audited twins of
#: probes that fail) need a process that queues from its start: switched back mid-process, the
#: queue is not what it was (a cell freed in one thread while another ran a forward pass crashed
#: the process, twice in two runs, never in a process that always queued). The setting:
#:
#: - ``synchronous``: from this file's import; a test marked ``asynchronous`` is skipped, saying
#:   how to run it (scripts/test.sh runs them in a queued process of its own, and so does the
#:   smoke run on the oldest MindSpore, scripts/test-oldest.sh, for those it holds);
#: - ``asynchronous``: MindSpore's default, for every test;
#: - unset: synchronous once the tests are collected, unless one marked ``asynchronous`` was
#:   selected or this is a pytest-xdist worker (which cannot know what it will be given): then queued.
#:
#: A fresh process a test starts dispatches as the test does: a synchronous process says so in its
#: environment (``MS_DEV_LAUNCH_BLOCKING``, this file's one place for it), which every process it
#: starts inherits: twins (tests/twins.py) and the ranks of an msrun job of
#: graphaudit.distributed.jobs (the distributed samples' job 29 s -> 24 s).
DISPATCH = os.environ.get("GRAPHAUDIT_TEST_DISPATCH", "")
if DISPATCH not in ("", "synchronous", "asynchronous"):
    raise pytest.UsageError(
        f"GRAPHAUDIT_TEST_DISPATCH={DISPATCH!r}: say 'synchronous' or 'asynchronous', or leave it unset"
    )


def _dispatch_synchronously() -> None:
    import mindspore as ms

    ms.set_context(pynative_synchronize=True)
    os.environ.setdefault("MS_DEV_LAUNCH_BLOCKING", "1")  # read once, at a process's start


if DISPATCH == "synchronous":  # before any kernel runs: set later, a step measured 7-11 ms, not 3
    _dispatch_synchronously()


@pytest.fixture(autouse=True)
def _run_in_a_scratch_folder(tmp_path_factory, monkeypatch):
    """Run every test in a folder of its own: what MindSpore writes next to the working folder
    (``rank_0/om/analyze_fail.ir`` after a failed graph compile) never lands in the checkout."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(autouse=True)
def _seeded():
    """Every test starts from one random state (MindSpore, its datasets, NumPy, ``random``)."""
    seed_everything()


@pytest.fixture(autouse=True)
def _execution_mode_put_back():
    """Put MindSpore's execution mode back after every test: a test that leaves GRAPH_MODE set
    made later files' PyNative-only code (a lambda given to ``value_and_grad``) fail, depending
    on which files a worker ran before."""
    import mindspore as ms

    mode = ms.get_context("mode")
    yield
    if ms.get_context("mode") != mode:
        ms.set_context(mode=mode)


@pytest.fixture(scope="session")
def out(tmp_path_factory):
    """Where the browser tests save what a reviewer looks at (screenshots, timings): the folder
    ``GRAPHAUDIT_TEST_OUT`` names, else pytest's temporary folder, never the checkout."""
    chosen = os.environ.get("GRAPHAUDIT_TEST_OUT")
    folder = Path(chosen).resolve() if chosen else tmp_path_factory.mktemp("browser-out")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots and timings for a reviewer: {folder}")
    return folder


def pytest_collection_modifyitems(config, items):
    """Tests marked ``exhaustive`` (a whole matrix) run only with GRAPHAUDIT_EXHAUSTIVE=1; the
    dispatch of MindSpore's kernels is settled (:data:`DISPATCH`)."""
    queued = [item for item in items if "asynchronous" in item.keywords]
    if DISPATCH == "synchronous":
        skip = pytest.mark.skip(
            reason="needs MindSpore's queued dispatch from the process's start: run it with "
            "GRAPHAUDIT_TEST_DISPATCH=asynchronous (scripts/test.sh runs these in a process of their own)"
        )
        for item in queued:
            item.add_marker(skip)
    elif not DISPATCH and not queued and not os.environ.get("PYTEST_XDIST_WORKER"):
        _dispatch_synchronously()
    if os.environ.get("GRAPHAUDIT_EXHAUSTIVE") == "1":
        return
    skip = pytest.mark.skip(reason="part of a whole matrix: run it with GRAPHAUDIT_EXHAUSTIVE=1")
    for item in items:
        if "exhaustive" in item.keywords:
            item.add_marker(skip)


#: Test files that share what one process builds, by group: each group runs in one worker, its
#: files one after the other (``--dist loadfile`` would hand each file to any worker and each
#: worker would build it all again; issue 40):
#: - "sample readers": the files that read every sample's audit (tests/sample_audits.py keeps one
#:   per process) or the distributed samples' msrun job (graphaudit.distributed.jobs starts one per
#:   process, 35-45 s): each sample is audited once per run (about 200 s of a 2-worker run);
#: - "mindcv models": the files that audit or capture unmodified mindcv models
#:   (tests/mindcv_models.py keeps one build per process: vit_b_32_224's takes ~9 s).
SHARED_BUILDS = {
    "sample readers": frozenset(
        {
            "test_cli.py",
            "test_dependency_stacks.py",
            "test_distributed_data.py",
            "test_distributed_setup.py",
            "test_finding_words.py",
            "test_metamorphic.py",
            "test_report_references.py",
            "test_samples.py",
            "test_samples_also.py",
            "test_sarif.py",
            "test_sarif_locations.py",
        }
    ),
    "mindcv models": frozenset({"test_mindcv_audit.py", "test_mindcv_models.py", "test_mode_init_api.py"}),
}
GROUP_OF = {name: group for group, names in SHARED_BUILDS.items() for name in names}


@pytest.hookimpl(optionalhook=True)  # the smoke run on the oldest MindSpore has no pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with each group of :data:`SHARED_BUILDS` as one unit of work."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedBuildsTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return GROUP_OF.get(Path(path).name, path)

    return SharedBuildsTogether(config, log)
