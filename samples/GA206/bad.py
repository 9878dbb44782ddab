"""GA206 bad: the freeze selects by an old prefix ("head") and freezes the classifier too."""

from mindspore import nn

from graphaudit import Spec

SUBJECT = "classifier.weight"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.neck = nn.Dense(8, 8)
        self.classifier = nn.Dense(8, 2)  # was called "head"  # <- SARIF

    def construct(self, x):
        return self.classifier(self.neck(self.backbone(x)))


def build() -> dict:
    net = Net()
    for p in net.get_parameters():
        if not p.name.startswith(("neck", "head")):
            p.requires_grad = False
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "spec": Spec(frozen=["backbone.*"], trainable=["neck.*", "classifier.*"]),
    }
