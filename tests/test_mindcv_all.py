"""scripts/audit_all_mindcv.py's per-model function on a handful of diverse mindcv models.

The full sweep over every mindcv model is the script itself (it takes most of an hour on a
small CPU); this runs the same per-model function on one model of each family that stresses
the capture differently: depthwise convs and LayerNorm (ConvNeXt), shifted windows and
relative position tables (Swin), grouped convs (RegNet), conv + transformer hybrids with
unfold/fold reshapes (MobileViT), two-branch cross attention (CrossViT) and multi-branch
concatenation with auxiliary heads (Inception v3).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("mindcv")

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "audit_all_mindcv.py"
spec = importlib.util.spec_from_file_location("audit_all_mindcv", SCRIPT)
audit_all_mindcv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(audit_all_mindcv)

MODELS = ["convnext_tiny", "swin_tiny", "regnet_x_200mf", "mobilevit_xx_small", "crossvit_9", "inception_v3"]
#: Inception v3 takes 50 s of a 2-core suite (its 299x299 default input): its multi-branch
#: concatenation with auxiliary heads is audited with GRAPHAUDIT_EXHAUSTIVE=1 and by the sweep.
IN_THE_SUITE = [pytest.param(m, marks=pytest.mark.exhaustive) if m == "inception_v3" else m for m in MODELS]


@pytest.mark.slow
@pytest.mark.parametrize("name", IN_THE_SUITE)
def test_unmodified_model_audits_without_crash_or_error(name):
    record = audit_all_mindcv.audit_model(name)
    assert record["status"] == "ok", record.get("traceback") or record.get("reason")
    assert record["errors"] == [], record["errors"]
    assert record["checks_run"] > 0


def test_candidate_sizes_try_small_then_the_model_default():
    assert audit_all_mindcv.candidate_sizes("vit_b_32_384")[:2] == [64, 384]
    assert audit_all_mindcv.default_size("no_such_model_160") == 160
    assert audit_all_mindcv.candidate_sizes("resnet18")[0] == 64


def test_summary_separates_crashes_and_false_positives(tmp_path):
    import json

    records = [
        {"model": "a", "status": "ok", "size": 64, "errors": [], "warnings": []},
        {
            "model": "b",
            "status": "ok",
            "size": 64,
            "warnings": [],
            "errors": [{"check_id": "GA101", "name": "x", "subject": "s", "message": "m"}],
        },
        {"model": "c", "status": "crash", "reason": "KeyError: 'x'", "traceback": "tb"},
        {"model": "d", "status": "build_failed", "reason": "RuntimeError: no"},
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = audit_all_mindcv.summarize(["a", "b", "c", "d", "e"], tmp_path)
    assert summary["audited"] == ["a", "b"]
    assert [f["model"] for f in summary["false_positive_errors"]] == ["b"]
    assert list(summary["crashes"]) == ["c"]
    assert summary["could_not_build"] == {"d": "RuntimeError: no"}
    assert summary["not_attempted"] == ["e"]
    assert "GA101" in (tmp_path / "summary.md").read_text()
