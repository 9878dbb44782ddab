"""The benchmark (``benchmarks/run.py``) runs end to end on toy sizes and fills every row.

No timing is asserted: only that each measurement runs and the table has its rows.
The measurements run in this process (not in subprocesses) to keep the test short.
"""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("mindcv")
if not sys.platform.startswith("linux"):
    pytest.skip("the benchmarks read /proc/self/status", allow_module_level=True)

from benchmarks import run


def test_benchmark_rows_on_toy_sizes():
    results = run.measure(
        model="synthetic:20",
        size=8,
        repeats=1,
        sizes=[10, 20, 40],
        traced_sizes=[10, 20],
        scale_repeats=1,
        render_stages=3,
        render_width=4,
        worker=run.run_worker,
    )
    table = run.rows(results)
    items = [row["item"] for row in table]
    for number in "123456":
        assert any(item.startswith(number) for item in items), number
    assert sum("structure audit time" in item for item in items) == 2
    assert sum("traced audit peak memory" in item for item in items) == 1
    for row in table:
        assert row["median"] is not None and row["baseline_median"] is not None, row["item"]
    text = run.format_table(results, table)
    assert "load average" in text and "structure-only audit" in text
