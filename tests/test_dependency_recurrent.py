"""Time-major recurrent layers: probed along their real batch axis, and found when fed (B, T, C) (GA344).

``nn.LSTM``/``GRU``/``RNN`` default to ``batch_first=False``. Which axis of the network's input
is the batch comes from the label, the dataset's batch size or a convolution reading the input;
without it (or with B == T) nothing is guessed: GA340 and GA344 say why they did not run.
"""

from __future__ import annotations

from types import SimpleNamespace

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.evidence import EvidenceSet
from graphaudit.evidence.dependency import DependencyProbe
from graphaudit.runner.request import build_request

RNG = np.random.default_rng(0)


def loud(report: graphaudit.Report) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(f.check_id, f.subject, f.confirmed_by) for f in report.findings if f.severity != "info"]


class Tagger(nn.Cell):
    """Embedding, a bidirectional LSTM, a tag per token; *transpose*: kept time-major, fed (T, B, C)."""

    def __init__(self, batch_first: bool, transpose: bool = False) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 8, batch_first=batch_first, bidirectional=True)
        self.tag = nn.Dense(16, 5)
        self.transpose = transpose

    def construct(self, ids):
        x = self.embed(ids)
        out, _ = self.lstm(x.swapaxes(0, 1) if self.transpose else x)
        return self.tag(out.swapaxes(0, 1) if self.transpose else out)


IDS = Tensor(RNG.integers(0, 20, (3, 7)).astype(np.int32))
TAGS = Tensor(RNG.integers(0, 5, (3, 7)).astype(np.int32))
# Tags laid out like the ids say nothing of which axis is the batch; the pipeline's batch size does.
PIPELINE = {"dataset": ds.NumpySlicesDataset({"ids": RNG.integers(0, 20, (6, 7)).astype(np.int32)}).batch(3)}
PIPELINE["dataset_batches"] = 0


def test_a_bidirectional_lstm_fed_batch_major_is_one_finding_naming_the_layer():
    """The probe sees the samples mix inside the LSTM (GA340); GA344 names the cause and carries it."""
    report = graphaudit.audit(Tagger(False), inputs=IDS, label=TAGS, **PIPELINE)
    assert loud(report) == [("GA344", "lstm", ("GA340",))]
    message = report.findings[0].message
    assert (
        "whose axis 0 is the batch of 3 (the training pipeline's batch size (3)): 'lstm' (3, 7, 8)."
        in message
    )
    assert message.endswith("Confirmed by GA340 (batch-elements-mix).")


def test_two_stacked_layers_fed_batch_major_are_one_finding_listing_both():
    class Stacked(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.embed, self.low, self.high = nn.Embedding(20, 8), nn.GRU(8, 8), nn.RNN(8, 8)

        def construct(self, ids):
            return self.high(self.low(self.embed(ids))[0])[0]

    report = graphaudit.audit(Stacked(), inputs=IDS, label=TAGS, **PIPELINE)
    assert [(f[0], f[1]) for f in loud(report)] == [("GA344", "low")]
    assert "'low' (3, 7, 8) and 'high' (3, 7, 8)." in report.findings[0].message


def test_a_time_major_tagger_transposed_right_is_probed_and_silent():
    report = graphaudit.audit(Tagger(False, transpose=True), inputs=IDS, label=TAGS, **PIPELINE)
    assert {"GA340", "GA344"} <= set(report.checks_run) and not loud(report)


def test_tags_laid_out_like_the_tokens_do_not_decide_the_batch_axis():
    """A time-major tagger fed (T, B) ids with (T, B) tags is correct; read as batch-major it would be a
    false GA344. Aligned per-token labels are no evidence: not run, saying why."""
    report = graphaudit.audit(Tagger(False), inputs=IDS.swapaxes(0, 1), label=TAGS.swapaxes(0, 1))
    assert not loud(report)
    for check_id in ("GA340", "GA344"):
        assert "which axis of the network input (7, 3) is the batch is not known" in str(
            report.skipped[check_id]
        )


class Classifier(nn.Cell):
    """A GRU over a time-major (T, B, C) input, classified from its last step; *mix*: centred over the batch."""

    def __init__(self, mix: bool = False) -> None:
        super().__init__()
        self.gru = nn.GRU(4, 6)
        self.head = nn.Dense(6, 3)
        self.mix = mix

    def construct(self, x):
        last = self.gru(x)[0][-1]  # (B, 6)
        return self.head(last - last.mean(0) if self.mix else last)


X = Tensor(RNG.normal(size=(7, 3, 4)).astype(np.float32))  # (T, B, C)
Y = Tensor(np.array([0, 2, 1], np.int32))


def test_a_time_major_input_is_probed_along_axis_1_that_the_label_says_is_the_batch():
    probed = EvidenceSet(build_request(Classifier(), inputs=X, label=Y))
    result = probed.need(DependencyProbe).result
    assert result.batch == 3 and not result.results["batch"].found and result.passes == 2
    report = graphaudit.audit(Classifier(mix=True), inputs=X, label=Y)
    assert [(f[0], f[1]) for f in loud(report)] == [("GA340", "(root)")]


def test_the_dataset_batch_size_says_which_axis_is_the_batch():
    data = ds.NumpySlicesDataset({"x": RNG.normal(size=(6, 4)).astype(np.float32)}, shuffle=True).batch(3)
    report = graphaudit.audit(Classifier(mix=True), inputs=X, dataset=data, dataset_batches=0)
    assert "GA340" in report.checks_run and [f[0] for f in loud(report)] == ["GA340"]


@pytest.mark.parametrize(
    ("inputs", "label", "reason"),
    [
        (X, None, "which axis of the network input (7, 3, 4) is the batch is not known"),
        (Tensor(np.zeros((3, 3, 4), np.float32)), Y, "the label's axis 0 (3) is both axis 0 and axis 1"),
    ],
    ids=["no-evidence", "batch-as-long-as-time"],
)
def test_an_undecidable_batch_axis_runs_neither_check_and_says_why(inputs, label, reason):
    report = graphaudit.audit(Classifier(), inputs=inputs, label=label)
    for check_id in ("GA340", "GA344"):
        assert check_id not in report.checks_run and reason in str(report.skipped[check_id])


class WithLoss(nn.Cell):
    """The model under a loss, as its training recipe runs it: the probe judges the model's output,
    ((T, B, K) logits, (B,) lengths), from inside: the (T, B, K) tensor is read batch first too."""

    def __init__(self, network: nn.Cell) -> None:
        super().__init__()
        self.network = network

    def construct(self, x, lengths):
        logits, _ = self.network(x, lengths)
        return (logits * logits).mean()


@pytest.mark.parametrize("wrapped", [False, True], ids=["bare", "under-a-loss"])
def test_deepspeech2_is_probed_along_the_batch_its_convolution_reads_and_is_silent(wrapped):
    """mindaudio's DeepSpeech2: (B, 1, F, T) into Conv2d, transposed to (T, B, C), a bidirectional LSTM,
    (T, B, K) out. Its time-major output is compared with the batch first (read as (T, ...) rows, the
    sound model moved by 12%); the same model with a reshape where the transpose is moves by 27%."""
    deepspeech2 = pytest.importorskip("mindaudio.models.deepspeech2")

    class Reshaped(deepspeech2.DeepSpeechModel):
        def construct(self, x, lengths):
            x = self.conv(x, lengths)
            b, c, f, t = x.shape
            return self.fc(self.RNN(x.reshape(t, b, c * f))), self.get_seq_lens(lengths)  # meant a transpose

    def build(kind: type) -> nn.Cell:
        ms.set_seed(0)
        model = kind(2, list("abcde"), 8, 1, config)
        return WithLoss(model) if wrapped else model

    config = SimpleNamespace(sample_rate=800, window_size=0.02)  # 9 frequencies
    inputs = (Tensor(RNG.normal(size=(2, 1, 9, 16)).astype(np.float32)), Tensor(np.array([16, 12], np.int32)))
    report = graphaudit.audit(build(deepspeech2.DeepSpeechModel), inputs=inputs)
    assert {"GA340", "GA344"} <= set(report.checks_run) and not loud(report), str(report)
    mixed = graphaudit.audit(build(Reshaped), inputs=inputs)
    assert [f[0] for f in loud(mixed)] == ["GA340"], str(mixed)


class LanguageModel(nn.Cell):
    """A time-major LSTM LM on batch-major ids: transposed in and out; *bidirectional* reads the future."""

    def __init__(self, bidirectional: bool) -> None:
        super().__init__()
        self.embed = nn.Embedding(30, 8)
        self.lstm = nn.LSTM(8, 8, bidirectional=bidirectional)
        self.head = nn.Dense(16 if bidirectional else 8, 30)

    def construct(self, ids):
        out, _ = self.lstm(self.embed(ids).swapaxes(0, 1))
        return self.head(out).swapaxes(0, 1)


def test_the_sequence_probes_run_on_a_time_major_lstm_language_model():
    """Unidirectional: every probe run and silent. Bidirectional: the future reaches the past (GA341), found
    at the LSTM (its (T, B, H) tensors are read batch first, their position axis then axis 1)."""
    ids = Tensor(RNG.integers(0, 30, (3, 10)).astype(np.int32))
    for bidirectional, expected in ((False, []), (True, [("GA341", "lstm")])):
        report = graphaudit.audit(
            LanguageModel(bidirectional), inputs=ids, label=ids, causal=True, **PIPELINE
        )
        assert {"GA340", "GA341", "GA342", "GA344"} <= set(report.checks_run)
        assert [(f[0], f[1]) for f in loud(report)] == expected
