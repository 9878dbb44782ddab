"""GA103 good: the declared tie is one Parameter object; the declared shared block is one cell."""

from mindspore import nn

from graphaudit import Spec


class LanguageModel(nn.Cell):
    def __init__(self, vocab: int = 10, dim: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        block = nn.Dense(dim, dim)
        self.encoder = nn.SequentialCell([block, nn.ReLU(), block])  # one block applied twice
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight = self.embed.embedding_table

    def construct(self, ids):
        return self.decoder(self.encoder(self.embed(ids)))


def build() -> dict:
    net = LanguageModel()
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "spec": Spec(
            shared_parameters=[["embed.embedding_table", "decoder.weight"]],
            shared_cells=[["encoder.0", "encoder.2"]],
        ),
    }
