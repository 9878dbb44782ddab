"""A bag-of-embeddings text classifier with masked mean pooling.

The bug: the pooled sum is divided by the number of real tokens with ``/``; a row that is all
padding (an empty document) divides 0 by 0 and its NaN spreads to the loss.  ops.DivNoNan (or
clamping the count to 1) was meant.
"""

import numpy as np
from mindspore import Tensor, nn

import graphaudit


class TextClassifier(nn.Cell):
    def __init__(self, vocab: int = 200, dim: int = 32, num_classes: int = 3) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.SequentialCell([nn.Dense(dim, 64), nn.GELU(), nn.Dense(64, dim), nn.GELU()])
        self.norm = nn.LayerNorm((dim,))
        self.head = nn.SequentialCell([nn.Dense(dim, 32), nn.ReLU(), nn.Dense(32, num_classes)])

    def construct(self, ids, mask):
        h = self.norm(self.encoder(self.embed(ids)))
        h = h * mask.expand_dims(-1)
        pooled = h.sum(axis=1) / mask.sum(axis=1, keepdims=True)  # bug: 0 / 0 for an empty row
        return self.head(pooled)


net = TextClassifier()
net.set_train(True)
optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)

ids = Tensor(np.array([[5, 17, 42, 0, 0, 0], [0, 0, 0, 0, 0, 0]], np.int32))
mask = Tensor(np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]], np.float32))  # 2nd document is empty
y = Tensor(np.array([2, 0], np.int32))

report = graphaudit.audit(net, optimizer, inputs=(ids, mask), label=y, loss_fn=nn.CrossEntropyLoss())
print(report)
