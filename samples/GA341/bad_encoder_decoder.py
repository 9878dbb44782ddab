"""GA341 bad: an encoder-decoder whose decoder self-attention was built without its causal mask.

The encoder attends both ways (by design: every decoder position may read every source
token), the decoder must not see its own future. The port builds both self-attentions from
one class and forgets ``causal=True`` for the decoder's: the decoder sees the token it has to
predict. The probe changes the decoder's input (``decoder_input_ids``) only, never the
encoder's.
"""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "decoder.0.self_attn"


class Attention(nn.Cell):
    """Multi-head attention of queries *x* over *memory*; *causal*: a query sees no later key."""

    def __init__(self, width: int, heads: int, causal: bool = False) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.q = nn.Dense(width, width)
        self.kv = nn.Dense(width, 2 * width)
        self.proj = nn.Dense(width, width)

    def construct(self, x, memory, mask=None):
        b, t, c = x.shape
        s, d = memory.shape[1], c // self.heads
        q = self.q(x).reshape(b, t, self.heads, d).transpose(0, 2, 1, 3)
        k, v = (
            y.reshape(b, s, self.heads, d).transpose(0, 2, 1, 3)
            for y in ops.split(self.kv(memory), c, axis=-1)
        )
        scores = ops.matmul(q, k.transpose(0, 1, 3, 2)) / d**0.5
        if self.causal:
            scores = ops.masked_fill(scores, Tensor(np.triu(np.ones((t, s), np.bool_), 1)), -1e4)
        if mask is not None:  # padded keys of the memory
            scores = scores + (1.0 - mask[:, None, None, :].astype(scores.dtype)) * -1e4
        weights = ops.softmax(scores, axis=-1)
        return self.proj(ops.matmul(weights, v).transpose(0, 2, 1, 3).reshape(b, t, c))


class EncoderLayer(nn.Cell):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm((width,)), nn.LayerNorm((width,))
        self.self_attn = Attention(width, heads)
        self.mlp = nn.SequentialCell([nn.Dense(width, 2 * width), nn.GELU(), nn.Dense(2 * width, width)])

    def construct(self, x, mask):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, mask)
        return x + self.mlp(self.norm2(x))


class DecoderLayer(nn.Cell):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm((width,)) for _ in range(3))
        self.self_attn = Attention(width, heads)  # causal=True forgotten
        self.cross_attn = Attention(width, heads)
        self.mlp = nn.SequentialCell([nn.Dense(width, 2 * width), nn.GELU(), nn.Dense(2 * width, width)])

    def construct(self, y, memory, mask):
        h = self.norm1(y)
        y = y + self.self_attn(h, h)
        y = y + self.cross_attn(self.norm2(y), memory, mask)
        return y + self.mlp(self.norm3(y))


class Seq2Seq(nn.Cell):
    """A small translation model: a bidirectional encoder, a causal decoder, learned positions."""

    def __init__(
        self, vocab: int = 32, width: int = 32, heads: int = 4, layers: int = 2, length: int = 16
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(length, width)
        self.encoder = nn.CellList([EncoderLayer(width, heads) for _ in range(layers)])
        self.decoder = nn.CellList([DecoderLayer(width, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm((width,))
        self.head = nn.Dense(width, vocab)

    def embed(self, ids):
        return self.tokens(ids) + self.positions(ops.arange(ids.shape[1]).astype(ids.dtype))[None]

    def construct(self, input_ids, attention_mask, decoder_input_ids):
        memory = self.embed(input_ids)
        for layer in self.encoder:
            memory = layer(memory, attention_mask)
        y = self.embed(decoder_input_ids)
        for layer in self.decoder:
            y = layer(y, memory, attention_mask)
        return self.head(self.norm(y))


def build() -> dict:
    rng = np.random.default_rng(0)
    source = Tensor(rng.integers(1, 32, (2, 12)).astype(np.int32))
    target = Tensor(rng.integers(1, 32, (2, 8)).astype(np.int32))
    mask = Tensor(np.ones((2, 12), np.int32))
    return {
        "net": Seq2Seq(),
        "inputs": (source, mask, target),
        "causal": True,  # the decoder's input is recognised by its name, decoder_input_ids
        "mask_input": "attention_mask",
    }
