"""mindocr 0.5: CRNN (VGG7 + BiLSTM + CTC) trained as ``mindocr/tools/train.py`` trains it.

The config is ``configs/rec/crnn/crnn_vgg7.yaml`` of the mindocr repository (tag v0.5.0),
written here as a dict (the YAML files are not in the wheel), with the batch size made 2 and
``amp_level`` O0 (the recipe's O3 casts the LSTM to float16, which has no CPU kernel).
Random initialisation, no pretrained weights.

The training wrapper is the zoo's: ``NetWithLossWrapper`` (the network gets the columns
``net_input_column_index``, the loss the columns ``label_column_index``) inside
``TrainOneStepWrapper`` (a ``nn.TrainOneStepWithLossScaleCell`` subclass: static loss
scale 1024, optional gradient clipping and EMA); the optimizer is the recipe's AdamW with
``filter_bias_and_bn``: no weight decay on biases and BatchNorm. Every import of mindocr is
inside a function (after :func:`zoo.shims.import_mindocr`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

BATCH = 2
NUM_CLASSES, MAX_TEXT_LEN = 37, 23

CONFIG = {
    "system": {"amp_level": "O0", "drop_overflow_update": False},
    "model": {
        "type": "rec",
        "transform": None,
        "backbone": {"name": "rec_vgg7", "pretrained": False},
        "neck": {"name": "RNNEncoder", "hidden_size": 256},
        "head": {
            "name": "CTCHead",
            "weight_init": "crnn_customised",
            "bias_init": "crnn_customised",
            "out_channels": NUM_CLASSES,
        },
    },
    "loss": {"name": "CTCLoss", "pred_seq_len": 24, "max_label_len": MAX_TEXT_LEN, "batch_size": BATCH},
    "scheduler": {
        "scheduler": "warmup_cosine_decay",
        "min_lr": 0.0,
        "lr": 0.0005,
        "num_epochs": 10,
        "warmup_epochs": 1,
        "decay_epochs": 9,
    },
    "optimizer": {
        "opt": "adamw",
        "filter_bias_and_bn": True,
        "momentum": 0.95,
        "weight_decay": 0.0001,
        "nesterov": False,
    },
    "loss_scaler": {"type": "static", "loss_scale": 1024},
    "train": {
        "pred_cast_fp32": False,
        "dataset": {"net_input_column_index": [0], "label_column_index": [1]},
    },
}


@dataclass
class OcrSetup:
    network: Any
    loss_fn: Any
    net_with_loss: Any
    optimizer: Any
    train_net: Any  # TrainOneStepWrapper(net_with_loss, optimizer, ...)
    batch: tuple[Any, ...]  # (image, text_seq), the dataset's output columns


def batch() -> tuple[Any, Any]:
    """Images ``(2, 3, 32, 100)`` and CTC labels ``(2, 23)``: class ids, padded at the end with the blank 36."""
    from mindspore import Tensor

    rng = np.random.default_rng(0)
    images = rng.standard_normal((BATCH, 3, 32, 100)).astype(np.float32)
    labels = np.full((BATCH, MAX_TEXT_LEN), NUM_CLASSES - 1, np.int32)
    for b in range(BATCH):
        n = 3 + 2 * b
        labels[b, :n] = rng.integers(0, NUM_CLASSES - 1, n)
    return Tensor(images), Tensor(labels)


def config() -> dict:
    from addict import Dict

    return Dict(copy.deepcopy(CONFIG))


def build_network(cfg: Any = None) -> Any:
    from mindocr.models import build_model

    cfg = config() if cfg is None else cfg
    return build_model(cfg.model, ckpt_load_path=None, amp_level=cfg.system.amp_level)


def recipe_optimizer(network: Any, cfg: Any = None, params: list | None = None, num_batches: int = 4) -> Any:
    """``create_scheduler``, ``create_group_params`` and ``create_optimizer``, as train.py calls them."""
    from mindocr.optim import create_group_params, create_optimizer
    from mindocr.scheduler import create_scheduler
    from mindocr.utils.loss_scaler import get_loss_scales

    cfg = config() if cfg is None else cfg
    _, optimizer_loss_scale = get_loss_scales(cfg)
    lr = create_scheduler(num_batches, **cfg["scheduler"])
    cfg.optimizer.update({"lr": lr, "loss_scale": optimizer_loss_scale})
    groups = create_group_params(network.trainable_params() if params is None else params, **cfg.optimizer)
    return create_optimizer(groups, **cfg.optimizer)


def build(network: Any = None, optimizer: Any = None) -> OcrSetup:
    """The training setup of train.py; *network* / *optimizer* replace the recipe's (injected bugs)."""
    from mindocr.losses import build_loss
    from mindocr.utils.loss_scaler import get_loss_scales
    from mindocr.utils.model_wrapper import NetWithLossWrapper
    from mindocr.utils.train_step_wrapper import TrainOneStepWrapper

    cfg = config()
    network = build_network(cfg) if network is None else network
    loss_fn = build_loss(cfg.loss.pop("name"), **cfg["loss"])
    net_with_loss = NetWithLossWrapper(
        network,
        loss_fn,
        input_indices=cfg.train.dataset.pop("net_input_column_index", None),
        label_indices=cfg.train.dataset.pop("label_column_index", None),
        pred_cast_fp32=cfg.train.pop("pred_cast_fp32", False),
    )
    loss_scale_manager, _ = get_loss_scales(cfg)
    optimizer = recipe_optimizer(network, cfg) if optimizer is None else optimizer
    train_net = TrainOneStepWrapper(
        net_with_loss,
        optimizer=optimizer,
        scale_sense=loss_scale_manager,
        drop_overflow_update=cfg.system.drop_overflow_update,
        gradient_accumulation_steps=1,
        clip_grad=False,
        clip_norm=1.0,
        ema=None,
    )
    train_net.set_train(True)  # what mindocr's trainer (Model.train) does before the first step
    return OcrSetup(network, loss_fn, net_with_loss, optimizer, train_net, batch())
