"""GA103 bad: the tie is declared, but set_data copies the table instead of tying it."""

from mindspore import nn

from graphaudit import Spec

SUBJECT = "decoder.weight"


class LanguageModel(nn.Cell):
    def __init__(self, vocab: int = 10, dim: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.decoder = nn.Dense(dim, vocab, has_bias=False)  # <- SARIF
        self.decoder.weight.set_data(self.embed.embedding_table)  # copies the values once

    def construct(self, ids):
        return self.decoder(self.embed(ids))


def build() -> dict:
    net = LanguageModel()
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "spec": Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]]),
    }
