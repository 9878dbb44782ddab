"""GA341 bad: a causal decoder whose attention drops its causal mask when an attention mask is given."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "blocks.0.attn"


class Attention(nn.Cell):
    """Multi-head self-attention (the causal mask is applied only when no attention mask is given)."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Dense(width, 3 * width)
        self.proj = nn.Dense(width, width)

    def construct(self, x, mask=None):
        b, t, c = x.shape
        d = c // self.heads
        q, k, v = (
            y.reshape(b, t, self.heads, d).transpose(0, 2, 1, 3) for y in ops.split(self.qkv(x), c, axis=-1)
        )
        scores = ops.matmul(q, k.transpose(0, 1, 3, 2)) / d**0.5
        future = Tensor(np.triu(np.ones((t, t), np.bool_), 1))
        scores = (
            ops.masked_fill(scores, future, -1e4) if mask is None else scores
        )  # dropped when a mask is given
        if mask is not None:
            scores = scores + (1.0 - mask[:, None, None, :].astype(scores.dtype)) * -1e4  # padded keys
        weights = ops.softmax(scores, axis=-1)
        return self.proj(ops.matmul(weights, v).transpose(0, 2, 1, 3).reshape(b, t, c))


class Block(nn.Cell):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm((width,))
        self.attn = Attention(width, heads)  # <- SARIF
        self.norm2 = nn.LayerNorm((width,))
        self.mlp = nn.SequentialCell([nn.Dense(width, 4 * width), nn.GELU(), nn.Dense(4 * width, width)])

    def construct(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)
        return x + self.mlp(self.norm2(x))


class Decoder(nn.Cell):
    """A GPT-style decoder: token and learned position embeddings, pre-norm blocks, a causal mask."""

    def __init__(
        self, vocab: int = 32, width: int = 32, heads: int = 4, layers: int = 2, length: int = 16
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(length, width)
        self.blocks = nn.CellList([Block(width, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm((width,))
        self.head = nn.Dense(width, vocab)

    def construct(self, ids, attention_mask=None):
        positions = ops.arange(ids.shape[1]).astype(ids.dtype)
        x = self.tokens(ids) + self.positions(positions)[None]
        for block in self.blocks:
            x = block(x, attention_mask)
        return self.head(self.norm(x))


def build(width: int = 2) -> dict:
    """*width*: how many blocks repeat the mistake (tests/test_widened_samples.py widens it)."""
    ids = Tensor(np.random.default_rng(0).integers(0, 32, (2, 16)).astype(np.int32))
    mask = Tensor(np.ones((2, 16), np.int32))
    return {
        "net": Decoder(layers=width),
        "inputs": (ids, mask),
        "causal": True,
        "mask_input": "attention_mask",
    }
