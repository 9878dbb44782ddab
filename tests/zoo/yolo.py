"""mindyolo 0.5: YOLOv8n trained as ``mindyolo/tools/train.py`` trains it, from a config written here.

The config is ``configs/yolov8/yolov8n.yaml`` of the mindyolo repository (tag v0.5.0) with
its bases ``yolov8-base.yaml``, ``hyp.scratch.low.yaml`` and ``coco.yaml``, merged by hand
(the YAML files are not in the wheel). Random initialisation, no pretrained weights.

The training wrapper is the zoo's functional train step
(``mindyolo.utils.train_step_factory.create_train_step_fn``): ``value_and_grad`` of
``loss_fn(network(x), label, x)`` over ``optimizer.parameters``, a static loss scaler and
the EMA update; the optimizer is the recipe's (``create_group_param(group_param="yolov8")``:
no weight decay on biases and BatchNorm, nesterov ``nn.Momentum`` with per-step learning
rates). Every import of mindyolo is inside a function: this module imports without it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

BATCH, IMAGE = 2, 64  # strides 8, 16, 32: feature maps of 8x8, 4x4 and 2x2

NETWORK = {
    "model_name": "yolov8",
    "nc": 80,
    "reg_max": 16,
    "stride": [8, 16, 32],
    "depth_multiple": 0.33,
    "width_multiple": 0.25,
    "max_channels": 1024,
    "backbone": [
        [-1, 1, "ConvNormAct", [64, 3, 2]],
        [-1, 1, "ConvNormAct", [128, 3, 2]],
        [-1, 3, "C2f", [128, True]],
        [-1, 1, "ConvNormAct", [256, 3, 2]],
        [-1, 6, "C2f", [256, True]],
        [-1, 1, "ConvNormAct", [512, 3, 2]],
        [-1, 6, "C2f", [512, True]],
        [-1, 1, "ConvNormAct", [1024, 3, 2]],
        [-1, 3, "C2f", [1024, True]],
        [-1, 1, "SPPF", [1024, 5]],
    ],
    "head": [
        [-1, 1, "Upsample", ["None", 2, "nearest"]],
        [[-1, 6], 1, "Concat", [1]],
        [-1, 3, "C2f", [512]],
        [-1, 1, "Upsample", ["None", 2, "nearest"]],
        [[-1, 4], 1, "Concat", [1]],
        [-1, 3, "C2f", [256]],
        [-1, 1, "ConvNormAct", [256, 3, 2]],
        [[-1, 12], 1, "Concat", [1]],
        [-1, 3, "C2f", [512]],
        [-1, 1, "ConvNormAct", [512, 3, 2]],
        [[-1, 9], 1, "Concat", [1]],
        [-1, 3, "C2f", [1024]],
        [[15, 18, 21], 1, "YOLOv8Head", ["nc", "reg_max", "stride"]],
    ],
}
LOSS = {"name": "YOLOv8Loss", "box": 7.5, "cls": 0.5, "dfl": 1.5, "reg_max": 16}
OPTIMIZER = {  # hyp.scratch.low.yaml
    "optimizer": "momentum",
    "lr_init": 0.01,
    "momentum": 0.937,
    "nesterov": True,
    "loss_scale": 1.0,
    "warmup_epochs": 3,
    "warmup_momentum": 0.8,
    "warmup_bias_lr": 0.1,
    "min_warmup_step": 1000,
    "group_param": "yolov8",
    "gp_weight_decay": 0.0005,
    "start_factor": 1.0,
    "end_factor": 0.01,
}


@dataclass
class YoloSetup:
    """What ``train.py`` builds: the network, its loss, the recipe's optimizer, the train step."""

    network: Any
    loss_fn: Any
    optimizer: Any
    ema: Any
    scaler: Any  # the static loss scaler (its scale_value is a Parameter)
    train_step: Any  # the zoo's train_step_func(x, label, optimizer_update=True)
    images: Any
    labels: Any


def batch() -> tuple[Any, Any]:
    """Images ``(2, 3, 64, 64)`` and labels ``(2, 8, 6)``: rows ``[image, class, x, y, w, h]``, padding -1."""
    from mindspore import Tensor

    rng = np.random.default_rng(0)
    images = rng.random((BATCH, 3, IMAGE, IMAGE), dtype=np.float32)
    labels = np.full((BATCH, 8, 6), -1, np.float32)
    for b in range(BATCH):
        labels[b, :2] = [[b, 3, 0.5, 0.5, 0.3, 0.4], [b, 7, 0.3, 0.6, 0.2, 0.2]]
    return Tensor(images), Tensor(labels)


def build_network(network_cfg: dict | None = None) -> Any:
    """YOLOv8n as ``create_model`` builds it from the config (random initialisation)."""
    from mindyolo.models import create_model
    from mindyolo.utils.config import Config

    cfg = Config(copy.deepcopy(network_cfg or NETWORK))
    return create_model(model_name=cfg.model_name, model_cfg=cfg, num_classes=cfg.nc, sync_bn=False)


def recipe_optimizer(
    network: Any, params: list | None = None, steps_per_epoch: int = 10, epochs: int = 50
) -> Any:
    """The recipe's optimizer: ``create_group_param`` (3 groups) and ``create_optimizer``, as train.py does.

    The per-step learning rates cover ``epochs * steps_per_epoch`` steps (the recipe: 500
    epochs of the dataset's steps), warming up from 0 (weights) and from 0.1 (biases).
    """
    from mindyolo.optim import create_group_param, create_lr_scheduler, create_optimizer

    options = dict(
        OPTIMIZER, steps_per_epoch=steps_per_epoch, epochs=epochs, total_batch_size=BATCH, accumulate=1
    )
    lr = create_lr_scheduler(**options)
    groups = create_group_param(params=network.trainable_params() if params is None else params, **options)
    return create_optimizer(params=groups, lr=lr, **options)


def build_loss(network: Any) -> Any:
    """``create_loss`` with the hyperparameters scaled as train.py scales them."""
    from mindyolo.models import create_loss

    nl = network.model.model[-1].nl
    options = dict(LOSS)
    options["box"] *= 3 / nl
    options["cls"] *= NETWORK["nc"] / 80 * 3 / nl
    return create_loss(**options, anchors=1, stride=NETWORK["stride"], nc=NETWORK["nc"])


def build(network: Any = None, optimizer: Any = None) -> YoloSetup:
    """The whole training setup of train.py; *network* / *optimizer* replace the recipe's (injected bugs)."""
    from mindyolo.optim import EMA
    from mindyolo.utils.train_step_factory import create_train_step_fn, get_gradreducer, get_loss_scaler

    network = build_network() if network is None else network
    loss_fn = build_loss(network)
    optimizer = recipe_optimizer(network) if optimizer is None else optimizer
    ema = EMA(network, build_network())
    scaler = get_loss_scaler("static", scale_value=1024.0)
    step = create_train_step_fn(
        task="detect",
        network=network,
        loss_fn=loss_fn,
        optimizer=optimizer,
        loss_ratio=1,
        scaler=scaler,
        reducer=get_gradreducer(False, optimizer.parameters),
        ema=ema,
        overflow_still_update=False,
        ms_jit=False,
        clip_grad=False,
        clip_grad_value=10.0,
    )
    network.set_train(True)  # as train.py does before creating the trainer
    optimizer.set_train(True)
    images, labels = batch()
    return YoloSetup(network, loss_fn, optimizer, ema, scaler, step, images, labels)
