"""GA102 good: an embedding and a separate output projection, nothing tied."""

from mindspore import nn


class LanguageModel(nn.Cell):
    def __init__(self, vocab: int = 10, dim: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.decoder = nn.Dense(dim, vocab, has_bias=False)

    def construct(self, ids):
        return self.decoder(self.embed(ids))


def build() -> dict:
    net = LanguageModel()
    return {"net": net, "optimizer": nn.Adam(net.trainable_params())}
