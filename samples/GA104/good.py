"""GA104 good: the design declares the tie alongside the freeze."""

from mindspore import nn

from graphaudit import Spec


class LanguageModel(nn.Cell):
    def __init__(self, vocab: int = 10, dim: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.hidden = nn.Dense(dim, dim)
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight = self.embed.embedding_table

    def construct(self, ids):
        return self.decoder(self.hidden(self.embed(ids)))


def build() -> dict:
    net = LanguageModel()
    net.embed.embedding_table.requires_grad = False
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "spec": Spec(frozen=["embed.*"], shared_parameters=[["embed.embedding_table", "decoder.weight"]]),
    }
