"""The dependency probe over real ports (slow): mindone's transformer LMs and two mindcv CNNs.

No false alarm on an unmodified model: LLaMA and BERT-MLM as mindone's Trainer wraps them
(``tests/zoo/lm.py``; the probe judges the model inside ``LossWithScaleSense``, whose own
output is the loss), two other ``*ForCausalLM`` ports built tiny (``tests/zoo/causal_lms.py``:
Mistral, sliding-window attention with grouped keys; OPT, whose positions are a running sum of
the attention mask), recognised as causal by their class name, each with its attention mask
named; two encoder-decoders (T5, BART: ``tests/zoo/seq2seq.py``), bare and (T5) as the Trainer
wraps them, probed on their decoder's input only; and mindcv models on a batch of 2. Port
bugs injected into LLaMA (the causal mask dropped, the rotary embedding never applied) and
into T5 (its decoder's causal mask dropped) are found and named.

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


@pytest.fixture
def seq2seq() -> Iterator[Any]:
    """``tests/zoo/seq2seq.py`` under the transformer sweep's shims (BART's LayerDrop draws with ``uniform_``)."""
    pytest.importorskip("mindone")
    pytest.importorskip("transformers")
    import importlib.util
    import sys
    from pathlib import Path

    from zoo import seq2seq

    path = Path(__file__).resolve().parent.parent / "scripts" / "audit_all_transformers.py"
    sweep = sys.modules.get("audit_all_transformers")
    if sweep is None:
        spec = importlib.util.spec_from_file_location("audit_all_transformers", path)
        sweep = importlib.util.module_from_spec(spec)
        sys.modules["audit_all_transformers"] = sweep
        spec.loader.exec_module(sweep)
    with sweep.shims():
        yield seq2seq


@pytest.mark.parametrize("name", ["t5", "bart"])
def test_encoder_decoders_are_probed_on_their_decoder_without_a_false_alarm(seq2seq, name):
    """Sources of 12 tokens, targets of 8: every decoder position may read every source token."""
    model = seq2seq.build(name)
    before = values(model)
    report = graphaudit.audit(model, inputs=seq2seq.plain_inputs(), mask_input="attention_mask", select=IDS)
    assert values(model) == before
    assert dependency_findings(report) == [], str(report)
    assert all(check in report.checks_run for check in IDS), report.skipped


def test_t5_as_the_trainer_wraps_it_is_probed_on_the_labels_it_shifts_into_its_decoder(seq2seq):
    model = seq2seq.build("t5")
    train_model, inputs = seq2seq.trainer_setup(model)
    report = graphaudit.audit(train_model, inputs=inputs, mask_input="attention_mask", select=IDS)
    assert dependency_findings(report) == [], str(report)
    assert all(check in report.checks_run for check in IDS), report.skipped


def _one_step(loss: Any, model: Any) -> Any:
    from mindspore import nn

    loss.model = model
    return nn.TrainOneStepCell(loss, nn.Adam(model.trainable_params(), 1e-4))


def _hf_named_loss() -> Any:
    """A loss cell written by hand, its arguments named as HF names them."""
    from mindspore import nn

    class Seq2SeqLoss(nn.Cell):
        def construct(self, input_ids, attention_mask, decoder_input_ids, labels):
            return self.model(input_ids, attention_mask, decoder_input_ids, labels=labels)[0]

    return Seq2SeqLoss()


def _own_named_loss() -> Any:
    """The same, its arguments named as the user likes."""
    from mindspore import nn

    class Seq2SeqLoss(nn.Cell):
        def construct(self, src, src_mask, tgt, tgt_labels):
            return self.model(src, src_mask, tgt, labels=tgt_labels)[0]

    return Seq2SeqLoss()


def test_t5_in_a_train_step_written_by_hand_is_probed_on_its_decoder_or_says_why_not(seq2seq):
    model = seq2seq.build("t5")
    source, mask, target = seq2seq.plain_inputs()
    inputs = (source, mask, target, target)
    named = _one_step(_hf_named_loss(), model)
    report = graphaudit.audit(named, inputs=inputs, mask_input="attention_mask", select=IDS)
    assert dependency_findings(report) == [] and all(c in report.checks_run for c in IDS), report.skipped
    other = _one_step(_own_named_loss(), model)
    unknown = graphaudit.audit(other, inputs=inputs, mask_input="src_mask", select=IDS)
    assert dependency_findings(unknown) == [] and "GA340" in unknown.checks_run
    assert "which of the inputs given feeds its decoder is not known" in unknown.skipped["GA341"]
    declared = graphaudit.audit(other, inputs=inputs, mask_input="src_mask", causal_input="tgt", select=IDS)
    assert dependency_findings(declared) == [] and all(c in declared.checks_run for c in IDS), (
        declared.skipped
    )


def test_t5_with_its_decoders_causal_mask_dropped_is_found_at_the_decoders_first_self_attention(seq2seq):
    from mindone.transformers.models.t5 import modeling_t5

    model = seq2seq.build("t5")
    train_model, inputs = seq2seq.trainer_setup(model)
    patches = shims.Patches()
    patches.set(modeling_t5.T5Stack, "_update_causal_mask", lambda self, *args, **kwargs: None)
    try:
        plain = graphaudit.audit(
            model, inputs=seq2seq.plain_inputs(), mask_input="attention_mask", select=IDS
        )
        wrapped = graphaudit.audit(train_model, inputs=inputs, mask_input="attention_mask", select=IDS)
    finally:
        patches.restore()
    assert dependency_findings(plain) == [("GA341", "decoder.block.0.layer.0.SelfAttention")]
    assert dependency_findings(wrapped) == [("GA341", "network.model.decoder.block.0.layer.0.SelfAttention")]
    assert "the tokens of decoder_input_ids after position 4" in plain.findings[0].message
    assert "the decoder's tokens (labels, shifted right by 1 into its input)" in wrapped.findings[0].message


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
