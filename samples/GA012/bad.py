"""GA012 bad: a GeneratorDataset whose "depth" column is all zeros (the depth files were never found)."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train:depth"


class Scans:
    """Random-access source: an RGB image and a depth map per row."""

    def __init__(self, depth_found: bool) -> None:
        rng = np.random.default_rng(0)
        self.rgb = rng.standard_normal((40, 3, 8, 8)).astype(np.float32)
        self.depth = rng.standard_normal((40, 1, 8, 8)).astype(np.float32) if depth_found else None

    def __getitem__(self, index):
        depth = self.depth[index] if self.depth is not None else np.zeros((1, 8, 8), np.float32)
        return self.rgb[index], depth, np.int32(index % 2)

    def __len__(self) -> int:
        return len(self.rgb)


class Fusion(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Dense(256, 2)

    def construct(self, rgb, depth):
        return self.head(rgb.concat(depth, 1).reshape(rgb.shape[0], -1))


def build() -> dict:
    train = ds.GeneratorDataset(Scans(depth_found=False), ["rgb", "depth", "label"]).batch(8)  # <- SARIF
    net = Fusion()
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}
