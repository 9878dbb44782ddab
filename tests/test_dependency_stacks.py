"""The sequence probes of a model with two stacks: an encoder-decoder's encoder is never "the future".

An encoder-decoder (T5, BART, Marian, Whisper, or one written by hand) has a bidirectional
encoder, whose input every decoder position may read, and a causal decoder. The sequence
probes change the future of the decoder's input only (``decoder_input_ids``, named by
``causal_input=`` or recognised by its name; ``labels`` that the model shifts right into its
decoder's input), the padding probe changes the encoder's padded positions only, and where
the decoder's input cannot be told the sequence checks are not run, with the reason. The
samples ``samples/GA341/{bad,good}_encoder_decoder.py`` are the small encoder-decoder whose
decoder mask is dropped (found) and whose encoder attends both ways (silent); the real T5 and
BART ports are in ``tests/test_dependency_zoo.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from sample_audits import SAMPLES, audited, load

import graphaudit
from graphaudit.capture.dependency.plan import Change, Plan, Region, Stack
from graphaudit.capture.dependency.probe import _regions
from graphaudit.errors import ArgumentError
from graphaudit.evidence import EvidenceSet
from graphaudit.evidence.dependency import DependencyProbe

IDS = ["GA340", "GA341", "GA342", "GA343"]


def dependency_findings(report: graphaudit.Report) -> list[tuple[str, str]]:
    return [(f.check_id, f.subject) for f in report.findings if f.check_id in IDS]


def probe(net: nn.Cell, inputs: tuple, **options) -> DependencyProbe:
    from graphaudit.runner.request import build_request

    return EvidenceSet(build_request(net, inputs=inputs, options=options)).need(DependencyProbe)


def seq2seq(which: str, **changes):
    """The GA341 encoder-decoder sample's network and inputs (*which*: ``bad`` or ``good``)."""
    kwargs = load(SAMPLES / "GA341" / f"{which}_encoder_decoder.py").build()
    return kwargs["net"], kwargs["inputs"]


def test_the_decoder_without_its_causal_mask_is_found_at_its_self_attention_and_the_encoder_is_not():
    report = audited("GA341", "bad_encoder_decoder").report
    assert dependency_findings(report) == [("GA341", "decoder.0.self_attn")]
    (finding,) = [f for f in report.findings if f.check_id == "GA341"]
    assert "the tokens of decoder_input_ids after position 4" in finding.message
    assert all(check in report.checks_run for check in IDS), report.skipped


def test_the_sound_encoder_decoder_is_silent_with_every_probe_run():
    report = audited("GA341", "good_encoder_decoder").report
    assert dependency_findings(report) == []
    assert all(check in report.checks_run for check in IDS), report.skipped
    result = probe(*seq2seq("good"), causal=True, mask_input="attention_mask").result
    assert (result.length, result.cut) == (8, 4)  # the decoder's length, not the source's
    assert result.passes == 3  # one more than a decoder-only model's: which outputs the decoder makes
    assert all(result.results[k].change == 0.0 for k in ("batch", "future", "padding"))


def test_one_stack_assumed_reports_the_encoder_and_says_how_to_name_the_decoders_input():
    """What every encoder-decoder got before (sources as long as targets): causal_input= is the way out."""
    net, (source, mask, target) = seq2seq("good")
    source, mask = source[:, :8], mask[:, :8]

    class Unnamed(nn.Cell):  # the same model, its arguments not named as HF names them
        def __init__(self) -> None:
            super().__init__()
            self.model = net

        def construct(self, src, src_mask, tgt):
            return self.model(src, src_mask, tgt)

    wrapped = Unnamed()
    assumed = graphaudit.audit(wrapped, inputs=(source, mask, target), causal=True, select=IDS)
    assert dependency_findings(assumed) == [("GA341", "model.encoder.0.self_attn")]
    assert "causal_input='decoder_input_ids'" in assumed.findings[0].fix
    named = graphaudit.audit(wrapped, inputs=(source, mask, target), causal_input="tgt", select=IDS)
    assert dependency_findings(named) == [] and "GA341" in named.checks_run


def test_a_per_token_output_judged_is_no_evidence_that_positions_are_ignored():
    """Sources longer than targets, one stack assumed: only the source's embedding has its length."""
    net, inputs = seq2seq("good")
    report = graphaudit.audit(net, inputs=inputs, causal_input="input_ids", select=IDS)
    assert dependency_findings(report) == []


def test_causal_input_names_the_decoders_input_and_implies_causal():
    net, inputs = seq2seq("bad")
    report = graphaudit.audit(net, inputs=inputs, causal_input="decoder_input_ids", select=IDS)
    assert dependency_findings(report) == [("GA341", "decoder.0.self_attn")]
    found = probe(net, inputs, causal_input="decoder_input_ids")
    assert (found.causal, found.causal_input) == ("causal_input='decoder_input_ids'", "decoder_input_ids")


def test_a_causal_input_that_names_nothing_gets_a_graphaudit_error():
    net, inputs = seq2seq("good")
    with pytest.raises(
        ArgumentError, match=r"causal_input='target_ids' names no argument of Seq2Seq.construct"
    ):
        graphaudit.audit(net, inputs=inputs, causal_input="target_ids")
    with pytest.raises(graphaudit.GraphAuditError, match=r"causal_input= takes a str, got 2 \(int\)"):
        graphaudit.audit(net, inputs=inputs, causal_input=2)


class Echo(nn.Cell):
    """A causal running mean of its first input; its second input is never read."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = nn.Embedding(16, 8)
        self.head = nn.Dense(8, 16)

    def construct(self, input_ids, unused_ids):
        h = ops.tanh(self.tokens(input_ids))
        return self.head(ops.cumsum(h, 1) / ops.arange(1, h.shape[1] + 1).astype(h.dtype)[None, :, None])


def test_an_input_that_reaches_no_output_is_not_run_with_the_reason_never_ok():
    rng = np.random.default_rng(0)
    ids, other = (Tensor(rng.integers(0, 16, (2, 8)).astype(np.int32)) for _ in range(2))
    report = graphaudit.audit(Echo(), inputs=(ids, other), causal_input="unused_ids", select=IDS)
    assert "GA341" not in report.checks_run and "GA342" not in report.checks_run
    assert "the input the sequence probes change does not reach them" in report.skipped["GA341"]
    assert "GA340" in report.checks_run


class ShiftsLabels(nn.Cell):
    """An encoder-decoder that makes its decoder's input from labels, as HF's do."""

    def __init__(self) -> None:
        super().__init__()
        self.config = type("Config", (), {"is_encoder_decoder": True})()
        self.model = load(SAMPLES / "GA341" / "good_encoder_decoder.py").Seq2Seq()

    def construct(self, input_ids, attention_mask, decoder_input_ids=None, labels=None):
        if decoder_input_ids is None:
            decoder_input_ids = self.shift_right(labels)
        return self.model(input_ids, attention_mask, decoder_input_ids)

    @staticmethod
    def shift_right(labels):
        return ops.concat([ops.zeros_like(labels[:, :1]), labels[:, :-1]], 1)


class ReadsLabels(ShiftsLabels):
    """The same, its decoder fed the labels as they are: not HF's convention, so not assumed."""

    def construct(self, input_ids, attention_mask, decoder_input_ids=None, labels=None):
        return self.model(
            input_ids, attention_mask, labels if decoder_input_ids is None else decoder_input_ids
        )


def test_labels_shifted_into_the_decoder_are_probed_one_position_later():
    rng = np.random.default_rng(0)
    source, labels = (Tensor(rng.integers(1, 32, (2, n)).astype(np.int32)) for n in (12, 8))
    inputs = (source, Tensor(np.ones((2, 12), np.int32)), None, labels)
    found = probe(ShiftsLabels(), inputs, mask_input="attention_mask")
    assert found.causal_input == "labels" and found.causal_shift == 1
    assert {k: r.found for k, r in found.result.results.items()} == dict.fromkeys(
        ("batch", "future", "padding", "positions"), False
    )
    assert found.result.results["future"].change == 0.0


def test_labels_the_model_is_not_seen_to_shift_are_not_taken_for_the_decoders_input():
    rng = np.random.default_rng(0)
    source, labels = (Tensor(rng.integers(1, 32, (2, n)).astype(np.int32)) for n in (12, 8))
    report = graphaudit.audit(
        ReadsLabels(), inputs=(source, Tensor(np.ones((2, 12), np.int32)), None, labels), select=IDS
    )
    assert "GA341" not in report.checks_run
    assert "none of the inputs given is known to feed its decoder" in report.skipped["GA341"]
    assert "GA340" in report.checks_run and dependency_findings(report) == []


def test_the_variants_change_each_stack_only_where_it_may_move():
    source = np.arange(24, dtype=np.int32).reshape(2, 12) % 20
    mask = np.ones((2, 12), np.int32)
    target = np.arange(16, dtype=np.int32).reshape(2, 8) % 20
    labels = (np.arange(16, dtype=np.int32).reshape(2, 8) + 3) % 20
    arrays = [source, mask, target, labels]
    plan = Plan.of(arrays, sequence=True, mask=1, stack=Stack(source=2, side=(2, 3)))
    assert (plan.length, plan.cut, plan.pads) == (8, 4, (0, 1, 2))  # pads: a quarter of the source
    future = plan.variant([Change(0, "future")])
    assert (future[0] == source).all() and (
        future[1] == plan.arrays[1]
    ).all()  # the encoder is never the future
    assert (future[2][0, :5] == target[0, :5]).all() and (future[2][0, 5:7] != target[0, 5:7]).all()
    assert (future[3][0, 5:7] != labels[0, 5:7]).all() and (future[2][1] == target[1]).all()
    # the encoder's pads are no position of the decoder's output: all 8 are judged for sample 0
    assert plan.judged_pads == () and _regions(plan, [0], False) == [Region((0,), tuple(range(8)))]
    pads = plan.variant([Change(0, "pads")])
    assert (pads[0][0, :3] != source[0, :3]).all() and (pads[0][0, 3:] == source[0, 3:]).all()
    assert (pads[2] == target).all() and (pads[3] == labels).all()  # the encoder's pads are not the decoder's
    one_stack = Plan.of([target, mask[:, :8]], sequence=True, mask=1)
    assert one_stack.judged_pads == (0, 1) and _regions(one_stack, [0], False) == [
        Region((0,), (2, 3, 4, 5, 6, 7))
    ]
    shifted = Plan.of(arrays, sequence=True, stack=Stack(source=3, side=(3,), shift=1))
    moved = shifted.variant([Change(0, "future")])[3][0] != labels[0]
    assert (
        moved.tolist() == [False] * 4 + [True, True] + [False] * 2
    )  # positions 5, 6 as the decoder sees them


def test_minus_100_labels_are_kept_and_ids_stay_ids():
    labels = np.array([[5, 7, 9, 11, -100, -100, -100, -100], [3, 4, 5, 6, 7, 8, 9, 10]], np.int32)
    plan = Plan.of([labels], sequence=False)
    changed = plan.variant([Change(0, "all")])[0][0]
    assert changed[4:].tolist() == [-100] * 4 and (changed[:4] >= 3).all() and (changed[:4] <= 11).all()


class DecodesItsSource(ShiftsLabels):
    """BART's way when no decoder input is given: the decoder reads the source shifted, as the encoder does."""

    def construct(self, input_ids, attention_mask, decoder_input_ids=None, labels=None):
        if decoder_input_ids is None:
            decoder_input_ids = self.shift_right(input_ids)
        return self.model(input_ids, attention_mask, decoder_input_ids)


def test_an_encoder_decoder_given_no_decoder_input_is_not_run_with_the_reason():
    rng = np.random.default_rng(0)
    source = Tensor(rng.integers(1, 32, (2, 12)).astype(np.int32))
    report = graphaudit.audit(
        DecodesItsSource(), inputs=(source, Tensor(np.ones((2, 12), np.int32))), select=IDS
    )
    assert "GA341" not in report.checks_run and "GA342" not in report.checks_run
    assert "DecodesItsSource is an encoder-decoder and none of the inputs given" in report.skipped["GA341"]
    assert "GA340" in report.checks_run and dependency_findings(report) == []


def test_a_right_padded_source_as_long_as_the_target_is_no_evidence_that_positions_are_ignored():
    """Issue 41's sweep (Speech2Text): the encoder's padding is not the decoder's future.

    The sound encoder-decoder, its source as long as its target and sample 0 right-padded (as
    tokenizers pad): the padding changes the encoder's last position of sample 0, which the
    GA342 probe read as the first cell that mixes the decoder's positions when it reused the
    pass that also changes the padding.
    """
    net, (source, _, target) = seq2seq("good")
    mask = np.ones((2, 8), np.int32)
    mask[0, 6:] = 0
    report = graphaudit.audit(
        net,
        inputs=(source[:, :8], Tensor(mask), target),
        causal=True,
        mask_input="attention_mask",
        select=IDS,
    )
    assert dependency_findings(report) == [], str(report)
    assert all(check in report.checks_run for check in IDS), report.skipped
