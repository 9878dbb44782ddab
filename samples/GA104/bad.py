"""GA104 bad: the design freezes the embedding but says nothing of its tie to the decoder."""

from mindspore import nn

from graphaudit import Spec

SUBJECT = "embed.embedding_table"


class LanguageModel(nn.Cell):
    def __init__(self, vocab: int = 10, dim: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)  # <- SARIF
        self.hidden = nn.Dense(dim, dim)
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight = self.embed.embedding_table  # left over from an experiment

    def construct(self, ids):
        return self.decoder(self.hidden(self.embed(ids)))


def build() -> dict:
    net = LanguageModel()
    net.embed.embedding_table.requires_grad = False
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "spec": Spec(frozen=["embed.*"]),
    }
