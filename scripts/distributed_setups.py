"""The data-parallel setups users copy, audited and watched in one real 2-rank msrun job.

    .venv/bin/python scripts/distributed_setups.py          # prints what each rank's audit said

Each scenario runs on both ranks: mindcv's ``create_dataset(..., num_shards, shard_id)`` /
``create_transforms`` / ``create_loader`` pipeline feeding a mindcv resnet18 (sharded, and the
same pipeline left unsharded), ``Model.train`` under ``DATA_PARALLEL`` watched by ``Watch()``,
and a functional loop with ``nn.DistributedGradReducer`` watched by ``watch()``. The correct
setups must draw no warning or error from the distributed checks (GA80x, GA96x).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

DISTRIBUTED = ("GA80", "GA96")


def _images(root: Path) -> None:
    """A tiny ImageFolder: 2 classes x 32 RGB images of 40x40, as JPEG files."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for label in ("a", "b"):
        folder = root / "train" / label
        folder.mkdir(parents=True)
        for index in range(32):
            pixels = rng.integers(0, 255, (40, 40, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / f"{index}.jpg")


def _loud(report) -> list[list[str]]:
    return [[f.check_id, f.subject, f.severity] for f in report.findings if f.severity != "info"]


def mindcv_pipeline(images: Path, rank: int, world: int, sharded: bool) -> list[list[str]]:
    import mindspore as ms
    from mindcv.data import create_dataset, create_loader, create_transforms
    from mindcv.models import create_model
    from mindspore import nn

    import graphaudit

    ms.set_auto_parallel_context(
        parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=world
    )
    shards = {"num_shards": world, "shard_id": rank} if sharded else {}
    data = create_dataset(root=str(images), split="train", shuffle=True, **shards)
    transform = create_transforms("imagenet", image_resize=32, is_training=True)
    loader = create_loader(data, batch_size=8, is_training=True, num_classes=2, transform=transform)
    ms.set_seed(0)
    net = create_model("resnet18", num_classes=2)
    return _loud(graphaudit.audit(net, nn.Momentum(net.trainable_params(), 0.01, 0.9), dataset=loader))


def _data(rank: int, world: int):
    import mindspore.dataset as ds

    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 8)).astype(np.float32)
    y = (x @ rng.standard_normal((8, 4))).argmax(1).astype(np.int32)
    return ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True, num_shards=world, shard_id=rank).batch(
        16
    )


def _bn_net():
    import mindspore as ms
    from mindspore import nn

    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dense(32, 4)])


def model_train(rank: int, world: int) -> list[list[str]]:
    import mindspore as ms
    from mindspore import nn

    import graphaudit

    ms.set_auto_parallel_context(
        parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=world
    )
    net = _bn_net()
    optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    model = ms.train.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), optimizer)
    watch = graphaudit.Watch(every=2)
    model.train(3, _data(rank, world), callbacks=[watch], dataset_sink_mode=False)
    return _loud(watch.report)


def functional_loop(rank: int, world: int) -> list[list[str]]:
    import mindspore as ms
    from mindspore import nn

    import graphaudit

    net = _bn_net()
    net.set_train()
    optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    loss_fn = nn.CrossEntropyLoss()
    grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, optimizer.parameters)
    reducer = nn.DistributedGradReducer(optimizer.parameters, mean=True, degree=world)
    with graphaudit.watch(net, optimizer, every=2, fail_on="never") as watch:
        for _ in range(3):
            for batch in _data(rank, world).create_dict_iterator():
                loss, grads = grad_fn(batch["x"], batch["label"])
                optimizer(reducer(grads))
                watch.step(loss=loss, grads=grads)
    return _loud(watch.report)


def worker(out: Path, images: Path) -> None:
    import mindspore as ms
    from mindspore.communication import get_group_size, get_rank, init

    init()
    rank, world = get_rank(), get_group_size()
    results = {}
    for name, run in (
        ("mindcv create_dataset sharded", lambda: mindcv_pipeline(images, rank, world, True)),
        ("mindcv create_dataset NOT sharded (the bug)", lambda: mindcv_pipeline(images, rank, world, False)),
        ("Model.train DATA_PARALLEL + Watch()", lambda: model_train(rank, world)),
        ("functional loop + DistributedGradReducer + watch()", lambda: functional_loop(rank, world)),
    ):
        ms.reset_auto_parallel_context()
        try:
            results[name] = run()
        except Exception as err:  # a scenario that cannot run here is reported, not hidden
            results[name] = [["(failed)", f"{type(err).__name__}: {err}"[:300], "error"]]
    (out / f"rank{rank}.json").write_text(json.dumps(results, indent=1))


def main() -> None:
    from graphaudit.distributed.jobs import run_msrun

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        _images(out / "images")
        run_msrun(Path(__file__), ["rank-worker", str(out), str(out / "images")], out, timeout=1800)
        for rank in (0, 1):
            for name, found in json.loads((out / f"rank{rank}.json").read_text()).items():
                distributed = [f for f in found if f[0].startswith(DISTRIBUTED) or f[0] == "(failed)"]
                print(f"rank {rank}  {name}: {distributed or 'silent'}  (all loud: {found})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["rank-worker"]:
        worker(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
