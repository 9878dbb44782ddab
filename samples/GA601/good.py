"""GA601 good: zeros where they are legitimate (biases, tokens, position embedding, layer scale)."""

import mindspore as ms
from mindspore import Parameter, nn, ops
from mindspore.common.initializer import initializer


class TinyViT(nn.Cell):
    def __init__(self, dim: int = 16, tokens: int = 4) -> None:
        super().__init__()
        self.patch = nn.Dense(8, dim, bias_init="zeros")
        self.cls_token = Parameter(initializer("zeros", (1, 1, dim), ms.float32), name="cls_token")
        self.pos_embed = Parameter(initializer("zeros", (1, tokens + 1, dim), ms.float32), name="pos_embed")
        self.norm = nn.LayerNorm((dim,))
        self.mlp = nn.Dense(dim, dim)
        self.gamma = Parameter(initializer("zeros", (dim,), ms.float32), name="gamma")  # layer scale
        self.head = nn.Dense(dim, 2)

    def construct(self, x):
        h = self.patch(x)
        h = (
            ops.cat((ops.broadcast_to(self.cls_token, (h.shape[0], 1, h.shape[2])), h), axis=1)
            + self.pos_embed
        )
        h = h + self.gamma * self.mlp(self.norm(h))
        return self.head(h[:, 0])


def build() -> dict:
    net = TinyViT()
    return {"net": net, "optimizer": nn.AdamWeightDecay(net.trainable_params(), 1e-3)}
