"""Healthy training recipes on real data, watched: the watchpoints must stay silent on every one.

Issue 38, item 5. Each recipe is what a user would write: one of scikit-learn's small real
data sets (digits, breast cancer, wine; features standardised with the training split's
statistics, a stratified train/validation split with a fixed seed) or mindcv's resnet18 on
the digits upsampled to 32x32, a sensible optimizer (Momentum, Adam, AdamW) and schedule
(warm-up, cosine, dynamic LR lists), trained by ``Model.train`` / ``Model.fit`` under
``graphaudit.Watch()`` or by a loop under ``graphaudit.watch()``. Each returns the watch's
report and the validation accuracy, so a test can ask both "silent?" and "did it learn?".

``RECIPES`` holds them by name; ``run(name, mode)`` runs one in PyNative (``"pynative"``) or
GRAPH_MODE (``"graph"``). ``RANDOM_LABELS`` is the control: the digits with their labels
permuted (nothing to learn).

Run ``PYTHONPATH=. python tests/healthy_recipes.py [names...] [--modes pynative,graph]``
for the table (recipe, mode, epochs, steps, validation accuracy, findings, seconds) and the
watchpoints' margins on each run.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
from mindspore import Tensor, nn

import graphaudit
from graphaudit.watch.session import DEFAULT_EVERY

__all__ = ["MODES", "RANDOM_LABELS", "RECIPES", "Outcome", "Recipe", "margins", "run"]

MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}
SEED = 0


@dataclass
class Outcome:
    """What a recipe returns: the watch's report and record, the validation accuracy, its size."""

    report: Any
    record: Any
    accuracy: float
    epochs: int
    seen: list[Any] = field(
        default_factory=list
    )  # every finding as it appeared (fail_on="error" stops there)
    mode: str = ""
    name: str = ""
    seconds: float = 0.0
    findings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def loud(self) -> list[tuple[str, str]]:
        """The findings of severity warning or error (``(check_id, severity)``)."""
        return [(c, s) for c, s in self.findings if s in ("warning", "error")]


@dataclass(frozen=True)
class Recipe:
    """A recipe, the validation accuracy it reaches at least (measured, with margin), and whether the suite runs it."""

    train: Callable[[], Outcome]
    min_accuracy: float
    suite: bool = True


# --- data -------------------------------------------------------------------------------------


def split(x: np.ndarray, y: np.ndarray, valid: float = 0.25) -> tuple[np.ndarray, ...]:
    """A stratified split with a fixed seed; features standardised by the training split's mean and std."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    x_train, x_valid, y_train, y_valid = train_test_split(
        x, y, test_size=valid, random_state=SEED, stratify=y
    )
    scaler = StandardScaler().fit(x_train)
    return (
        scaler.transform(x_train).astype(np.float32),
        scaler.transform(x_valid).astype(np.float32),
        y_train.astype(np.int32),
        y_valid.astype(np.int32),
    )


def tabular(name: str) -> tuple[np.ndarray, ...]:
    from sklearn import datasets

    loader = {
        "digits": datasets.load_digits,
        "breast_cancer": datasets.load_breast_cancer,
        "wine": datasets.load_wine,
    }[name]
    data = loader()
    return split(data.data, data.target)


def digit_images(train: int = 384, valid: int = 192) -> tuple[np.ndarray, ...]:
    """The digits' 8x8 images, upsampled 4x (nearest) to 32x32, three channels, standardised."""
    from sklearn import datasets
    from sklearn.model_selection import train_test_split

    data = datasets.load_digits()
    x = data.images.astype(np.float32) / 16.0
    x_train, x_valid, y_train, y_valid = train_test_split(
        x, data.target, train_size=train, test_size=valid, random_state=SEED, stratify=data.target
    )
    mean, std = x_train.mean(), x_train.std()

    def images(a: np.ndarray) -> np.ndarray:
        a = ((a - mean) / std).repeat(4, axis=1).repeat(4, axis=2)
        return np.ascontiguousarray(np.repeat(a[:, None], 3, axis=1), np.float32)

    return images(x_train), images(x_valid), y_train.astype(np.int32), y_valid.astype(np.int32)


def dataset(x: np.ndarray, y: np.ndarray, batch: int, *, shuffle: bool) -> ds.Dataset:
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=shuffle).batch(batch)


def steps_per_epoch(rows: int, batch: int) -> int:
    return math.ceil(rows / batch)


def mlp(inputs: int, hidden: int, classes: int, *, dropout: float = 0.0) -> nn.Cell:
    layers = [nn.Dense(inputs, hidden), nn.ReLU()]
    if dropout:
        layers.append(nn.Dropout(p=dropout))
    layers += [nn.Dense(hidden, hidden), nn.ReLU(), nn.Dense(hidden, classes)]
    return nn.SequentialCell(layers)


def accuracy(net: nn.Cell, x: np.ndarray, y: np.ndarray) -> float:
    net.set_train(False)
    logits = np.concatenate([net(Tensor(x[i : i + 256])).asnumpy() for i in range(0, len(x), 256)])
    net.set_train(True)
    return float((logits.argmax(1) == y).mean())


def seeded() -> None:
    ms.set_seed(SEED)
    ds.config.set_seed(SEED)
    np.random.seed(SEED)


def fit(
    net: nn.Cell,
    optimizer: nn.Optimizer,
    data: tuple[np.ndarray, ...],
    *,
    epochs: int,
    batch: int,
    how: str,
    every: int = DEFAULT_EVERY,
) -> Outcome:
    """Train *net* with ``Model``: *how* ``"fit"`` (``Model.fit(valid_dataset=...)`` with a ``Loss``
    metric) or ``"train"`` (``Model.train`` with ``Watch(eval_dataset=...)``)."""
    x_train, x_valid, y_train, y_valid = data
    seen: list[Any] = []
    train = dataset(x_train, y_train, batch, shuffle=True)
    valid = dataset(x_valid, y_valid, 64, shuffle=False)
    loss_fn = nn.CrossEntropyLoss()
    if how == "fit":
        model = ms.train.Model(net, loss_fn, optimizer, metrics={"loss": nn.Loss(), "acc": nn.Accuracy()})
        watch = graphaudit.Watch(every=every, fail_on="never", on_finding=seen.append)
        model.fit(epochs, train, valid_dataset=valid, callbacks=[watch], dataset_sink_mode=False)
    else:
        model = ms.train.Model(net, loss_fn, optimizer)
        watch = graphaudit.Watch(every=every, fail_on="never", eval_dataset=valid, on_finding=seen.append)
        model.train(epochs, train, callbacks=[watch], dataset_sink_mode=False)
    return Outcome(watch.report, watch.record, accuracy(net, x_valid, y_valid), epochs, seen)


# --- the recipes ------------------------------------------------------------------------------


def digits_momentum_fit() -> Outcome:
    """Digits, an MLP, Momentum 0.05/0.9 at batch 32, 12 epochs, ``Model.fit`` with validation."""
    data = tabular("digits")
    net = mlp(64, 128, 10)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    return fit(net, optimizer, data, epochs=12, batch=32, how="fit", every=10)


def digits_adam_warmup_cosine() -> Outcome:
    """Digits, an MLP with dropout, Adam 1e-3 with 2 warm-up epochs then cosine decay (a dynamic LR list), batch 64."""
    data = tabular("digits")
    epochs, batch = 15, 64
    per_epoch = steps_per_epoch(len(data[0]), batch)
    warm = nn.warmup_lr(1e-3, 2 * per_epoch, per_epoch, 2)
    cosine = nn.cosine_decay_lr(1e-5, 1e-3, (epochs - 2) * per_epoch, per_epoch, epochs - 2)
    net = mlp(64, 128, 10, dropout=0.2)
    optimizer = nn.Adam(net.trainable_params(), learning_rate=warm + cosine)
    return fit(net, optimizer, data, epochs=epochs, batch=batch, how="train", every=5)


def digits_cnn_adamw() -> Outcome:
    """Digits as 1x8x8 images, a small CNN with BatchNorm, AdamW 2e-3 (weight decay 0.01), batch 32, 10 epochs, fit."""
    x_train, x_valid, y_train, y_valid = tabular("digits")
    data = (x_train.reshape(-1, 1, 8, 8), x_valid.reshape(-1, 1, 8, 8), y_train, y_valid)
    net = nn.SequentialCell(
        [
            nn.Conv2d(1, 16, 3, pad_mode="same"),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, pad_mode="same"),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Dense(32 * 2 * 2, 10),
        ]
    )
    optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=2e-3, weight_decay=0.01)
    return fit(net, optimizer, data, epochs=10, batch=32, how="fit", every=10)


def breast_cancer_adamw_cosine() -> Outcome:
    """Breast cancer, an MLP, AdamW 1e-3 with cosine decay (``nn.CosineDecayLR``), batch 32, 20 epochs, train + eval_dataset."""
    data = tabular("breast_cancer")
    epochs, batch = 20, 32
    total = epochs * steps_per_epoch(len(data[0]), batch)
    net = mlp(30, 64, 2)
    schedule = nn.CosineDecayLR(1e-5, 1e-3, total)
    optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=schedule, weight_decay=0.01)
    return fit(net, optimizer, data, epochs=epochs, batch=batch, how="train", every=5)


def breast_cancer_momentum_warmup() -> Outcome:
    """Breast cancer, logistic-like MLP, Momentum 0.01/0.9 with 1 warm-up epoch then constant (a hand-written list), batch 32, 15 epochs, fit."""
    data = tabular("breast_cancer")
    epochs, batch = 15, 32
    per_epoch = steps_per_epoch(len(data[0]), batch)
    schedule = [0.01 * min(1.0, (i + 1) / per_epoch) for i in range(epochs * per_epoch)]
    net = mlp(30, 32, 2)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=schedule, momentum=0.9)
    return fit(net, optimizer, data, epochs=epochs, batch=batch, how="fit", every=5)


def wine_adam() -> Outcome:
    """Wine (178 samples), an MLP, Adam 3e-3, batch 32, 30 epochs, fit with validation."""
    data = tabular("wine")
    net = mlp(13, 32, 3)
    optimizer = nn.Adam(net.trainable_params(), learning_rate=3e-3)
    return fit(net, optimizer, data, epochs=30, batch=32, how="fit", every=5)


def wine_momentum_cosine() -> Outcome:
    """Wine, an MLP, Momentum 0.05/0.9 with ``nn.cosine_decay_lr``, batch 32, 25 epochs, train + eval_dataset."""
    data = tabular("wine")
    epochs, batch = 25, 32
    per_epoch = steps_per_epoch(len(data[0]), batch)
    schedule = nn.cosine_decay_lr(1e-4, 0.05, epochs * per_epoch, per_epoch, epochs)
    net = mlp(13, 32, 3)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=schedule, momentum=0.9)
    return fit(net, optimizer, data, epochs=epochs, batch=batch, how="train", every=5)


def digits_loop_adam() -> Outcome:
    """Digits, an MLP, Adam 1e-3, batch 64, 10 epochs: a functional loop under ``graphaudit.watch()``.

    In GRAPH_MODE the step is compiled (``@ms.jit``) and returns the gradients it applied.
    """
    x_train, x_valid, y_train, y_valid = tabular("digits")
    epochs, batch = 10, 64
    net = mlp(64, 128, 10)
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss, grads

    if ms.get_context("mode") == ms.GRAPH_MODE:
        step = ms.jit(step)
    rng = np.random.default_rng(SEED)
    seen: list[Any] = []
    with graphaudit.watch(
        net, optimizer, every=5, batch_size=batch, fail_on="never", on_finding=seen.append
    ) as w:
        for _ in range(epochs):
            net.set_train(True)
            order = rng.permutation(len(x_train))
            for start in range(0, len(order), batch):
                rows = order[start : start + batch]
                loss, grads = step(Tensor(x_train[rows]), Tensor(y_train[rows]))
                w.step(loss, grads)
            net.set_train(False)
            w.validate(float(forward(Tensor(x_valid), Tensor(y_valid)).asnumpy()))
    net.set_train(True)
    return Outcome(w.report, w.record, accuracy(net, x_valid, y_valid), epochs, seen)


def resnet18_digits_momentum() -> Outcome:
    """mindcv resnet18 (10 classes, from scratch) on 384 digits upsampled to 3x32x32, Momentum 0.05/0.9
    with 4 warm-up steps then cosine (a dynamic LR list), batch 32, 2 epochs (24 steps), ``Model.fit``."""
    import mindcv

    data = digit_images()
    epochs, batch = 2, 32
    per_epoch = steps_per_epoch(len(data[0]), batch)
    total = epochs * per_epoch
    schedule = [
        0.05 * (i + 1) / 4 if i < 4 else 0.025 * (1 + math.cos(math.pi * (i - 4) / (total - 4)))
        for i in range(total)
    ]
    net = mindcv.create_model("resnet18", num_classes=10, pretrained=False)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=schedule, momentum=0.9, weight_decay=1e-4)
    return fit(net, optimizer, data, epochs=epochs, batch=batch, how="fit", every=4)


def digits_random_labels() -> Outcome:
    """The control: digits' MLP of ``digits_momentum_fit`` with the training labels permuted (nothing to learn), 8 epochs."""
    x_train, x_valid, y_train, y_valid = tabular("digits")
    y_train = np.random.default_rng(SEED).permutation(y_train)
    net = mlp(64, 128, 10)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    return fit(net, optimizer, (x_train, x_valid, y_train, y_valid), epochs=8, batch=32, how="fit", every=10)


# Validation accuracies measured (both modes, seed 0) are in docs/watch.md; each bound is well below them.
RECIPES: dict[str, Recipe] = {
    "digits_momentum_fit": Recipe(digits_momentum_fit, 0.93),
    "digits_adam_warmup_cosine": Recipe(digits_adam_warmup_cosine, 0.93),
    "digits_cnn_adamw": Recipe(digits_cnn_adamw, 0.93),
    "breast_cancer_adamw_cosine": Recipe(breast_cancer_adamw_cosine, 0.93),
    "breast_cancer_momentum_warmup": Recipe(breast_cancer_momentum_warmup, 0.93),
    "wine_adam": Recipe(wine_adam, 0.9),
    "wine_momentum_cosine": Recipe(wine_momentum_cosine, 0.9),
    "digits_loop_adam": Recipe(digits_loop_adam, 0.93),
    "resnet18_digits_momentum": Recipe(resnet18_digits_momentum, 0.5, suite=False),
}
RANDOM_LABELS = Recipe(digits_random_labels, 0.0)


def run(name: str, mode: str) -> Outcome:
    """Run the recipe *name* (or ``"random_labels"``) in *mode* (``"pynative"`` or ``"graph"``), seeded."""
    recipe = RANDOM_LABELS if name == "random_labels" else RECIPES[name]
    ms.set_context(mode=MODES[mode])
    seeded()
    began = time.perf_counter()
    outcome = recipe.train()
    outcome.seconds = time.perf_counter() - began
    outcome.name, outcome.mode = name, mode
    every = {(f.check_id, f.severity, f.subject): f for f in [*outcome.seen, *outcome.report.findings]}
    outcome.findings = [(c, s) for c, s, _ in every]
    return outcome


def margins(record: Any) -> dict[str, str]:
    """What each watchpoint measured on *record*, against its threshold (for the docs' table)."""
    from graphaudit.checks._shared.curves import (
        EXPLODING_RELATIVE,
        RATIO_TOO_LARGE,
        RATIO_TOO_SMALL,
        VANISHING,
    )
    from graphaudit.checks._shared.watch import BOUNCE, FAR_ABOVE_NOISE_SCALE, loss_curve, noise_scale

    found: dict[str, str] = {}
    curve = loss_curve(record.losses)
    if curve is not None:
        rise = -curve.fall
        bound = max(3 * curve.standard_error, 0.10 * abs(curve.head))
        found["GA951 rise/bound"] = f"{rise / bound:.2f}"
        found["GA951 tail noise/loss"] = f"{curve.sigma_tail / abs(curve.tail) / BOUNCE:.2f}x{BOUNCE}"
        found["GA952 fall/3SE"] = f"{curve.fall / (3 * curve.standard_error):.1f}"
    points = record.validation
    if points:
        best = min(range(len(points)), key=lambda i: points[i][2])
        after = [loss / points[best][2] - 1 for _, _, loss in points[best + 1 :]]
        found["GA953 best/evals after/min rise"] = (
            f"e{points[best][0]}/{len(after)}/{min(after):+.1%}" if after else f"e{points[best][0]}/0/-"
        )
        recent = [loss for _, _, loss in points[-3:]]
        falls = [1 - b / a for a, b in zip(recent, recent[1:])]
        found["GA954 last falls"] = "/".join(f"{f:.1%}" for f in falls)
    if record.noise_windows and record.batch_size:
        estimate = noise_scale(record.noise_windows, record.batch_size)
        if estimate is not None:
            found["GA955 B/B_simple"] = (
                f"{record.batch_size / max(estimate[0], 1e-12):.2f} (<{FAR_ABOVE_NOISE_SCALE:g})"
            )
    ratios = {}
    for p in record.matrices():
        values = [r for s in record.samples if (r := s.ratio(p)) is not None]
        if len(values) >= 3:
            ratios[record.parameters[p]] = statistics.median(values)
    if ratios:
        found["GA956/957 update ratio"] = (
            f"{min(ratios.values()):.2g}..{max(ratios.values()):.2g} ({RATIO_TOO_SMALL:g}..{RATIO_TOO_LARGE:g})"
        )
    grads = [s for s in record.samples if s.grad_norms is not None]
    if grads:
        relative = {p: [] for p in record.matrices()}
        totals = []
        for s in grads:
            rms = {p: s.grad_norms[p] / math.sqrt(max(record.sizes[p], 1)) for p in relative}
            top = max(rms.values(), default=0.0)
            for p, value in rms.items():
                if top > 0:
                    relative[p].append(value / top)
            totals.append(math.sqrt(sum(n * n for n in s.grad_norms)))
        lowest = min((statistics.median(v) for v in relative.values() if len(v) >= 3), default=math.nan)
        found["GA958 weakest layer"] = f"{lowest:.2g} (>{VANISHING:g})"
        if totals and totals[0] > 0:
            found["GA959 growth"] = f"{max(totals) / totals[0]:.2g} (<{EXPLODING_RELATIVE:g})"
    return found


def main(argv: list[str]) -> int:
    modes = ["pynative", "graph"]
    names = []
    for arg in argv:
        if arg.startswith("--modes="):
            modes = arg.split("=", 1)[1].split(",")
        else:
            names.append(arg)
    names = names or [*RECIPES, "random_labels"]
    header = f"{'recipe':32} {'mode':8} {'epochs':>6} {'steps':>5} {'val acc':>7} {'seconds':>7}  findings"
    print(header)
    print("-" * len(header))
    details = []
    for name in names:
        for mode in modes:
            outcome = run(name, mode)
            shown = ", ".join(f"{c} {s}" for c, s in outcome.findings) or "none"
            print(
                f"{name:32} {mode:8} {outcome.epochs:>6} {outcome.record.steps:>5} {outcome.accuracy:>7.3f} "
                f"{outcome.seconds:>7.1f}  {shown}",
                flush=True,
            )
            final = {(f.check_id, f.subject) for f in outcome.report.findings}
            gone = [f for f in outcome.seen if (f.check_id, f.subject) not in final]
            details.append((name, mode, margins(outcome.record), [*outcome.report.findings, *gone]))
    print("\nmargins (measured vs threshold):")
    for name, mode, found, findings in details:
        print(f"{name} [{mode}]: " + "; ".join(f"{k} {v}" for k, v in found.items()))
        for finding in findings:
            print(f"    {finding.check_id} {finding.severity}: {finding.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
