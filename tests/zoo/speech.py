"""mindaudio 0.3: DeepSpeech2 trained as ``examples/deepspeech2/train.py`` trains it.

The model is ``mindaudio.models.deepspeech2.DeepSpeechModel`` with the recipe's spectrogram
config (``deepspeech2.yaml``: 16 kHz, 20 ms Hamming windows, 10 ms stride, so 161
frequency bins), a bidirectional LSTM, the 29 labels of LibriSpeech, scaled down to 2 LSTM
layers of 64 units (the recipe: 5 of 1024) and a batch of 2 utterances of 64 frames (the
recipe pads to 1501). Random initialisation, no pretrained weights.

The training wrapper is the recipe's: ``NetWithCTCLoss`` (the network and ``ops.CTCLoss`` on
``(inputs, input_length, target_indices, label_values)``) inside ``nn.TrainOneStepCell``
inside ``mindspore.train.Model``, with ``nn.Adam(eps=1e-5, loss_scale=1024)`` over
``ParameterTuple(net.trainable_params())`` (the recipe uses no parameter groups and no
weight decay). Every import of mindaudio is inside a function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

BATCH, FRAMES, LABEL_LEN = 2, 64, 10
LABELS = ["'", *[chr(c) for c in range(65, 91)], " ", "_"]  # 29 classes; "_" (the last) is CTC's blank


class SpectConfig:
    """``SpectConfig`` of deepspeech2.yaml."""

    sample_rate = 16000
    window_size = 0.02
    window_stride = 0.01
    window = "hamming"


@dataclass
class SpeechSetup:
    network: Any
    loss_net: Any
    optimizer: Any
    train_net: Any  # nn.TrainOneStepCell(NetWithCTCLoss(network), Adam)
    model: Any  # mindspore.train.Model(train_net), what train.py trains
    batch: tuple[Any, ...]


def batch() -> tuple[Any, ...]:
    """``(inputs, input_length, target_indices, label_values)`` as the recipe's dataset gives them."""
    from mindspore import Tensor

    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((BATCH, 1, 161, FRAMES)).astype(np.float32)  # log-spectrograms
    input_length = np.full((BATCH,), FRAMES, np.float32)
    target_indices = np.array([[b, m] for b in range(BATCH) for m in range(LABEL_LEN)], np.int64)
    label_values = rng.integers(0, len(LABELS) - 1, BATCH * LABEL_LEN).astype(np.int32)
    return Tensor(inputs), Tensor(input_length), Tensor(target_indices), Tensor(label_values)


def build_network() -> Any:
    from mindaudio.models.deepspeech2 import DeepSpeechModel

    return DeepSpeechModel(
        batch_size=BATCH,
        labels=LABELS,
        rnn_hidden_size=64,
        nb_layers=2,
        audio_conf=SpectConfig,
        rnn_type="LSTM",
        bidirectional=True,
    )


def recipe_optimizer(params: Any) -> Any:
    """``Adam(weights, learning_rate, eps, loss_scale)`` with the recipe's OptimConfig."""
    from mindspore import ParameterTuple, nn

    return nn.Adam(ParameterTuple(params), learning_rate=3e-4, eps=1e-5, loss_scale=1024)


def build(network: Any = None, optimizer: Any = None) -> SpeechSetup:
    """The training setup of train.py; *network* / *optimizer* replace the recipe's (injected bugs)."""
    from mindaudio.loss.ctc_loss import NetWithCTCLoss
    from mindspore import nn
    from mindspore.train import Model

    network = build_network() if network is None else network
    loss_net = NetWithCTCLoss(network, ascend=False)
    optimizer = recipe_optimizer(network.trainable_params()) if optimizer is None else optimizer
    train_net = nn.TrainOneStepCell(loss_net, optimizer)
    train_net.set_train(True)
    return SpeechSetup(network, loss_net, optimizer, train_net, Model(train_net), batch())
