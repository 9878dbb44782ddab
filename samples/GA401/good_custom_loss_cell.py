"""GA401 good: the class branch ends in logits, which the custom loss cell gives to BCE-with-logits."""

import numpy as np
from mindspore import Tensor, nn, ops


class Detector(nn.Cell):
    """Boxes and 3 class scores per sample, returned as one tensor ``(boxes | classes)``."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU()])
        self.box = nn.Dense(32, 4)
        self.cls = nn.Dense(32, 3)  # logits: apply ops.sigmoid at inference

    def construct(self, x):
        features = self.body(x)
        return ops.concat((self.box(features), self.cls(features)), 1)


class DetectionLoss(nn.Cell):
    """A box regression on the first 4 columns, a multi-label BCE-with-logits on the rest."""

    def construct(self, pred, target):
        box_loss = ops.mse_loss(pred[:, :4], target[:, :4])
        scores = pred[:, 4:].transpose(1, 0)
        cls_loss = ops.binary_cross_entropy_with_logits(
            scores, target[:, 4:].transpose(1, 0), ops.ones_like(scores), ops.ones_like(scores)
        )
        return box_loss + cls_loss


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Detector()
    loss_net = nn.WithLossCell(net, DetectionLoss())
    train = nn.TrainOneStepCell(loss_net, nn.Adam(net.trainable_params(), 1e-3))
    x = Tensor(rng.standard_normal((8, 16)).astype(np.float32))
    boxes = rng.random((8, 4)).astype(np.float32)
    classes = rng.integers(0, 2, (8, 3)).astype(np.float32)
    y = Tensor(np.concatenate([boxes, classes], axis=1))
    return {"net": train, "inputs": (x, y)}
