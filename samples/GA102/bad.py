"""GA102 bad: the decoder's weight is the embedding table (a tie, listed as info)."""

from mindspore import nn

SUBJECT = "embed.embedding_table"


class LanguageModel(nn.Cell):
    def __init__(self, vocab: int = 10, dim: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)  # <- SARIF
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight = self.embed.embedding_table

    def construct(self, ids):
        return self.decoder(self.embed(ids))


def build() -> dict:
    net = LanguageModel()
    return {"net": net, "optimizer": nn.Adam(net.trainable_params())}
