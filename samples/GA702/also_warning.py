"""GA702 warning: a Dropout given p=0.3 next to a leftover keep_prob=1.0 (the old way of saying "off").

The rate comes from p, but MindSpore's Dropout.construct returns its input unchanged when
keep_prob == 1, so this layer drops nothing at all in training: not only a deprecated spelling
(info) but a regularisation silently switched off, hence a warning.
"""

from mindspore import nn

SUBJECT = "drop"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(16, 32)
        self.drop = nn.Dropout(keep_prob=1.0, p=0.3)
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.drop(self.fc(x)))


def build() -> dict:
    net = Net()
    net.set_train(True)
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3)}
