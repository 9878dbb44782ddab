"""One arm of the twin tests of tests/test_state_twins.py (not a test module itself).

    python tests/state_twin.py ARM AUDITED

seeds every random state the same way in every process, builds *ARM* and, with AUDITED=1,
audits it; then, audited or not, does what the user does next and prints one hex digest of
everything that produced:

- ``rng``: a network whose ``construct`` draws through functions bound before the audit
  (``from numpy.random import rand``, ``from random import random``, ``uniform = ops.uniform``
  with a seed) and through MindSpore's random ops and Dropout; audited with ``probe=2``; then
  three forward passes and the next draws of the bound functions.
- ``reference``: GA640's bad sample audited against its original's dump (the original's
  weights loaded into it for the comparison); then two training steps and every parameter.
- ``dataset``: a pipeline with a shuffle, MindSpore's random crops and flips, Python transforms
  drawing from NumPy's and Python's global generators; audited by ``audit_dataset`` and by
  ``audit(..., dataset=)``; then two epochs of a new iterator and the next global draws.
"""

from __future__ import annotations

import hashlib
import random
import sys
from random import random as bound_random

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import Tensor, nn, ops
from numpy.random import rand as bound_rand

ARM, AUDITED = sys.argv[1], sys.argv[2] == "1"
bound_uniform = ops.uniform


class Noisy(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 2)
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        noise = Tensor(bound_rand(*x.shape).astype(np.float32)) * bound_random()
        y = self.fc(x + noise)
        y = y + ops.standard_normal(y.shape) * 0.01 + bound_uniform(y.shape, Tensor(0.0), Tensor(1.0), seed=3)
        return self.drop(y)


def pipeline() -> ds.Dataset:
    images = (np.arange(64 * 8 * 8 * 3) % 251).astype(np.uint8).reshape(64, 8, 8, 3)
    labels = (np.arange(64) % 4).astype(np.int32)
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=True)
    one = {"input_columns": "image", "num_parallel_workers": 1}  # one worker: the twin's order is the same
    data = data.map([vision.RandomCrop(6), vision.RandomHorizontalFlip()], **one)
    data = data.map(lambda x: (x + np.random.randint(0, 3, x.shape)).astype(np.float32), **one)
    data = data.map(lambda x: x + np.float32(random.random()), **one)
    return data.shuffle(16).batch(8)


ds.config.set_num_parallel_workers(1)
ds.config.set_seed(1234)
ms.set_seed(7)
np.random.seed(5)
random.seed(6)
digest = hashlib.sha256()
x = Tensor(np.ones((2, 4), np.float32))
if ARM == "rng":
    net = Noisy()
    net.set_train(True)
    if AUDITED:
        import graphaudit

        label = Tensor(np.array([0, 1], np.int32))
        optimizer = nn.SGD(net.trainable_params(), 0.1)
        graphaudit.audit(net, optimizer, inputs=(x,), label=label, loss_fn=nn.CrossEntropyLoss(), probe=2)
    for _ in range(3):
        digest.update(net(x).asnumpy().tobytes())
elif ARM == "dataset":
    data = pipeline()
    net = nn.Dense(4, 2)  # in both arms: its initialisation draws from the global generators
    if AUDITED:
        import graphaudit

        graphaudit.audit_dataset(data, num_classes=4)
        graphaudit.audit(net, nn.SGD(net.trainable_params()), dataset=data, num_classes=4)
    for _ in range(2):
        for row in data.create_tuple_iterator(num_epochs=1, output_numpy=True):
            for array in row:
                digest.update(np.ascontiguousarray(array).tobytes())
elif ARM == "reference":
    # The original's weights are loaded into the port for the output comparison (GA640): the
    # port must come back with its own, its BatchNorm statistics and its training flag.
    import pathlib

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from sample_audits import SAMPLES, load

    sample = load(SAMPLES / "GA640" / "bad.py").build()
    net = sample["net"]
    net.set_train(True)
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    label = Tensor(np.array([1, 3], np.int32))
    if AUDITED:
        import graphaudit

        graphaudit.audit(net, optimizer, inputs=sample["inputs"], reference=sample["reference"])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer)
    for _ in range(2):
        digest.update(step(sample["inputs"], label).asnumpy().tobytes())
    for param in net.get_parameters():
        digest.update(param.asnumpy().tobytes())
else:
    raise SystemExit(f"unknown arm {ARM!r}")
digest.update(bound_rand(3).tobytes())
digest.update(np.random.rand(3).tobytes())
digest.update(repr((bound_random(), random.random(), ds.config.get_seed())).encode())
print(digest.hexdigest())
