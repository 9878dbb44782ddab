"""The dependency probe over real ports (slow): mindone's transformer LMs and two mindcv CNNs.

No false alarm on an unmodified model: LLaMA and BERT-MLM as mindone's Trainer wraps them
(``tests/zoo/lm.py``; the probe judges the model inside ``LossWithScaleSense``, whose own
output is the loss), two other ``*ForCausalLM`` ports built tiny (``tests/zoo/causal_lms.py``:
Mistral, sliding-window attention with grouped keys; OPT, whose positions are a running sum of
the attention mask), recognised as causal by their class name, each with its attention mask
named; and mindcv models on a batch of 2. Two port bugs injected into LLaMA (the causal mask
dropped, the rotary embedding never applied) are found and named.

Only the dependency checks are selected (``select=IDS``): the other checks have their own
zoo tests. The rest of the ports (every mindone ``*ForCausalLM`` that runs on CPU, and the
mindcv models) are covered by the sweeps (``scripts/audit_all_transformers.py``,
``scripts/audit_all_mindcv.py``; results in ``docs/dependencies.md``), which run the probe.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from zoo import shims

import graphaudit

pytestmark = pytest.mark.slow

IDS = ["GA340", "GA341", "GA342", "GA343"]


def values(model: Any) -> dict[int, bytes]:
    return {id(p): p.asnumpy().tobytes() for p in model.get_parameters()}


def dependency_findings(report: graphaudit.Report) -> list[tuple[str, str]]:
    return [(f.check_id, f.subject) for f in report.findings if f.check_id in IDS]


@pytest.fixture
def mindone() -> Iterator[Any]:
    pytest.importorskip("mindone")
    pytest.importorskip("transformers")
    from zoo import causal_lms, lm

    with shims.for_mindone():
        yield lm, causal_lms


@pytest.mark.parametrize("name", ["llama", "bert"])
def test_trainer_wrapped_lms_are_probed_without_a_false_alarm(mindone, name):
    lm, _ = mindone
    setup = lm.build(name)
    before = values(setup.train_model)
    report = graphaudit.audit(setup.train_model, inputs=setup.inputs, mask_input="attention_mask", select=IDS)
    assert values(setup.train_model) == before
    assert dependency_findings(report) == [], str(report)
    probes = ["GA340", "GA343"] + (["GA341", "GA342"] if name != "bert" else [])
    assert all(check in report.checks_run for check in probes), report.skipped


@pytest.mark.parametrize("name", ["mistral", "opt"])
def test_other_causal_lm_ports_are_recognised_and_probed_without_a_false_alarm(mindone, name):
    _, causal_lms = mindone
    model = causal_lms.build(name)
    before = values(model)
    report = graphaudit.audit(model, inputs=causal_lms.inputs(), mask_input="attention_mask", select=IDS)
    assert values(model) == before
    assert dependency_findings(report) == [], str(report)
    assert all(check in report.checks_run for check in IDS), report.skipped


def test_llama_with_its_causal_mask_dropped_is_found_at_the_first_attention(mindone):
    from mindone.transformers.models.llama import modeling_llama

    _, causal_lms = mindone
    setup_model = mindone[0].build_model("llama")
    patches = shims.Patches()
    patches.set(modeling_llama.LlamaModel, "_update_causal_mask", lambda self, *args, **kwargs: None)
    try:
        ids = causal_lms.inputs()
        report = graphaudit.audit(setup_model, inputs=ids, mask_input="attention_mask", select=IDS)
    finally:
        patches.restore()
    assert dependency_findings(report) == [
        ("GA341", "model.layers.0.self_attn"),
        ("GA343", "model.layers.0.self_attn"),
    ]


def test_llama_without_its_rotary_embedding_is_found_to_ignore_positions(mindone):
    from mindone.transformers.models.llama import modeling_llama

    _, causal_lms = mindone
    model = mindone[0].build_model("llama")
    patches = shims.Patches()
    patches.set(modeling_llama, "apply_rotary_pos_emb", lambda q, k, cos, sin, *args, **kwargs: (q, k))
    try:
        report = graphaudit.audit(model, inputs=causal_lms.inputs(), select=IDS)
    finally:
        patches.restore()
    assert dependency_findings(report) == [("GA342", "model.layers.0.self_attn")]


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small_100"])
def test_mindcv_models_are_probed_without_a_false_alarm(name):
    mindcv = pytest.importorskip("mindcv")
    from mindspore import Tensor

    net = mindcv.create_model(name, pretrained=False)
    net.set_train(True)
    x = Tensor(np.random.default_rng(0).random((2, 3, 64, 64), dtype=np.float32))
    before = values(net)
    report = graphaudit.audit(net, inputs=x, mode="train", select=IDS)
    assert values(net) == before
    assert "GA340" in report.checks_run and dependency_findings(report) == []
