"""SARIF: every bad sample's finding points at the line of the sample that creates what it flags.

The line of the cell, parameter or optimizer a finding is about (GA401: the ``Dense`` built
with ``activation="sigmoid"``, not the loss and not the factory's ``def``); for a loss, a
data-pipeline step or the whole network, the factory's line that creates it. ``LINES`` holds
that line's text for each check's bad sample (read off the sample, one entry per finding
when it has several); the findings about the label handed to ``audit()`` (``DATA``) have no such
line and keep the fallback, the factory.
"""

from __future__ import annotations

import pytest
from test_samples import IDS
from test_sarif import SAMPLES, _line_text, located_sample_log

#: Checks whose flagged thing is the label passed to audit(): no line of the network creates it.
DATA = {"GA051", "GA052", "GA053", "GA054", "GA060"}
#: For each check, the text of the bad sample's line its findings point at.
LINES: dict[str, str | tuple[str, ...]] = {
    "GA050": "self.features = nn.SequentialCell(",  # the first layer that reads the unscaled input
    "GA001": 'train = ds.ImageFolderDataset(image_folder(2, 16), shuffle=False).map(prepare, "image").batch(8)',
    "GA002": 'train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=False).shuffle(8).batch(16)',
    "GA003": 'train = ds.ImageFolderDataset(image_folder()).map(prepare, "image").batch(8)',
    "GA004": 'eval_ds = ds.ImageFolderDataset(image_folder(1), shuffle=False).map(evaluate, "image").batch(4)',
    "GA005": 'eval_ds = ds.ImageFolderDataset(image_folder(1), shuffle=False).map(evaluate + finish, "image").batch(4)',
    "GA006": 'train = ds.ImageFolderDataset(image_folder(5)).map(prepare, "image").batch(4)',
    "GA007": 'train = ds.MindDataset(mindrecord(48)).map(transforms.OneHot(3), "label").batch(8)',
    "GA008": 'train = ds.CSVDataset(csv_file(), column_defaults=[0.0, 0.0, 0], column_names=["a", "b", "label"]).batch(',
    "GA009": 'train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(10)',
    "GA010": 'train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(4)',
    "GA011": "train = ds.CSVDataset(csv_file(broken=True), column_defaults=[0.0, 0.0, 0], column_names=columns).batch(",
    "GA012": 'train = ds.GeneratorDataset(Scans(depth_found=False), ["rgb", "depth", "label"]).batch(8)',
    "GA013": 'train = ds.NumpySlicesDataset({"age": (age - 40) / 12, "label": y}).batch(16)',
    "GA014": 'train = ds.ImageFolderDataset(image_folder(copy_across=True)).map(prepare, "image").batch(4)',
    "GA015": 'train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(16, drop_remainder=False)',
    "GA101": "self.body = nn.SequentialCell([block] * 3)",
    "GA102": "self.embed = nn.Embedding(vocab, dim)",
    "GA103": "self.decoder = nn.Dense(dim, vocab, has_bias=False)",
    "GA104": "self.embed = nn.Embedding(vocab, dim)",
    "GA105": 'self.w = Parameter(Tensor(np.ones((4,), np.float32)), name="w")',
    "GA201": 'return {"net": net, "optimizer": nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)}',
    "GA202": "optimizer = nn.Adam(Net().trainable_params(), learning_rate=1e-3)",
    "GA203": "optimizer = nn.Momentum(net.get_parameters(), 0.01, 0.9, weight_decay=1e-4)",
    "GA204": "self.backbone = nn.Dense(4, 8)",
    "GA205": "self.backbone = nn.Dense(4, 8)",
    "GA206": 'self.classifier = nn.Dense(8, 2)  # was called "head"',
    "GA207": "optimizer = nn.SGD(net.trainable_params(), 0.1)",
    "GA301": "self.fc2 = nn.Dense(8, 8)",
    "GA302": "self.aux = nn.Dense(8, 8)",
    "GA303": "self.hidden = [nn.Dense(8, 8) for _ in range(width)]",
    "GA300": "net = Net()",  # the network the design names nothing of (the Spec is not located)
    "GA304": "self.stem = nn.Dense(4, 8)",
    "GA305": "self.user_tower = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 8)])",
    "GA306": "self.encoder = nn.SequentialCell([nn.Dense(8, 4), nn.ReLU()])",
    "GA307": "self.refine = nn.SequentialCell([nn.Dense(8, 8), nn.Tanh()])",
    "GA308": "self.fc2 = nn.Dense(64, 64)",
    "GA309": "self.layers = nn.SequentialCell(cells)",
    "GA310": "self.layers = nn.SequentialCell(cells)",
    "GA311": "self.head = nn.SequentialCell([nn.Dense(256, 4), nn.ReLU(), nn.Dense(4, 100)])",
    "GA312": "self.stages = nn.CellList([conv(widths[i], widths[i + 1], stride=2) for i in range(5)])",
    "GA313": "self.body = nn.SequentialCell(",
    "GA314": "self.features = nn.SequentialCell(",
    "GA315": "net = nn.SequentialCell(",
    "GA316": "net = nn.SequentialCell(",
    "GA317": 'net = nn.SequentialCell([nn.Dense(20, 64, activation="relu"), nn.ReLU(), nn.Dense(64, 10)])',
    "GA318": "self.conv1 = nn.Conv2d(3, 16, 4)",
    "GA319": "net = nn.SequentialCell(",
    "GA320": "net = nn.SequentialCell(",
    "GA340": "net = Net()",
    "GA341": "self.attn = Attention(width, heads)",
    "GA342": "self.attn = Attention(width, heads)",
    "GA343": "self.attn = Attention(width, heads)",
    "GA344": "self.lstm = nn.LSTM(16, 16)  # reads (T, B, C)",
    "GA401": 'self.score = nn.Dense(8, 1, activation="sigmoid")',
    "GA402": "self.head = nn.Dense(4 * 8 * 8, 5)",
    "GA403": "self.softmax = nn.Softmax(axis=-1)",
    "GA404": '"net": nn.WithLossCell(net, nn.NLLLoss()),',
    "GA405": '"loss_fn": nn.BCEWithLogitsLoss(),',
    "GA406": "self.softmax = nn.Softmax(axis=-1)",
    "GA407": 'self.head = nn.Dense(32, 10, activation="tanh")',
    "GA408": '"loss_fn": nn.CrossEntropyLoss(),',
    "GA409": '"loss_fn": nn.MSELoss(),',
    "GA501": "self.features = nn.SequentialCell(",
    "GA502": "self.backbone = nn.SequentialCell([nn.Dense(4, 8), GaussianNoise(), nn.ReLU()])",
    "GA503": "self.bn = nn.BatchNorm2d(8, use_batch_statistics=False)",
    "GA601": 'self.hidden = nn.CellList([nn.Dense(32, 32, weight_init="zeros") for _ in range(width)])',
    "GA602": "self.fc1 = nn.CellList([nn.Dense(16, 16, weight_init=Constant(0.01)) for _ in range(width)])",
    "GA603": "self.layers = nn.CellList([copy.deepcopy(layer) for _ in range(width)])",
    "GA604": ("self.backbone = Backbone(width)", "self.head = nn.Dense(width, classes)"),
    "GA605": 'return {"net": Classifier(), "inputs": image(), "checkpoint": path}',
    "GA606": ("self.backbone = Backbone(width)", "self.head = nn.Dense(width, classes)"),
    "GA630": "self.fc1 = nn.Dense(8, 16, has_bias=False)  # the original's Linear has a bias",
    "GA631": "self.mid = nn.Dense(16, 16)  # not in the original",
    "GA632": "self.fc1 = InOutDense(8, 16)",
    "GA633": "self.embed = nn.Embedding(32, 8)",
    "GA634": 'return {"net": Mlp(), "inputs": x, "reference": str(ORIGINAL)}',  # the whole network
    "GA640": 'return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}',  # its construct flattens
    "GA635": "self.bn = nn.BatchNorm2d(8, momentum=0.1)  # torch's 0.1, read as MindSpore's",
    "GA636": "self.act = nn.GELU()  # MindSpore's default: the tanh approximation",
    "GA637": "self.drop = nn.Dropout(p=0.9)  # the keep-probability of the original's 0.1",
    "GA639": 'self.up = nn.Upsample(size=(12, 12), mode="bilinear", align_corners=True)  # the original: False',
    "GA638": 'self.avg = nn.AvgPool2d(3, 1, pad_mode="pad", padding=1)  # counts the padding',
    "GA701": "self.drop = nn.Dropout(0.1)  # the first argument is keep_prob",
    "GA702": "self.drop = nn.Dropout(keep_prob=0.9)",
    "GA703": "net = MaskedMean()",
    "GA704": "self.backbone = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU()])",
    "GA705": "net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])",
    "GA706": "net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])",
    "GA707": "self.bn = nn.BatchNorm2d(8)",
    "GA708": 'return {"net": net, "optimizer": optimizer, "inputs": x, "label": y, "loss_fn": nn.CrossEntropyLoss()}',
    "GA709": "self.bn = nn.BatchNorm2d(8, momentum=0.1)",
    "GA710": '"loss_fn": nn.SoftmaxCrossEntropyWithLogits(sparse=True),',
    "GA711": "self.pool = nn.MaxPool2d(2)",
    "GA712": "self.block = Block()",
    "GA713": 'return {"net": Net(), "inputs": x, "graph_mode": True}',
    "GA720": "self.features = nn.SequentialCell(",
    "GA721": '"optimizer": nn.Adam(net.trainable_params(), learning_rate=0.1),',
    "GA722": 'train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(512)',
    "GA723": "optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1, momentum=0.9, nesterov=True)",
    "GA801": "self.head = nn.Dense(",
    "GA802": "train = ds.NumpySlicesDataset(columns(0, 2), shuffle=True).batch(16)",
    "GA803": "train = ds.NumpySlicesDataset(columns(0, 2), shuffle=True).batch(16)",
    "GA804": "train = ds.NumpySlicesDataset(columns(0, 2), shuffle=True, num_shards=2, shard_id=0).batch(16)",
    "GA805": "net, optimizer = network()",
    "GA806": "net, optimizer = network()",
    "GA901": "self.aux = nn.Dense(4, 3)",
    "GA902": "net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 3)])",
    "GA903": "self.fc = nn.Dense(4, 3)",
    "GA904": "self.aux = nn.Dense(4, 3)",
    "GA905": "optimizer = nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)",
    "GA906": "net = mlp()",
    "GA907": "net = mlp()",
    "GA908": "net = mlp()",
    "GA909": "net = mlp()",
    "GA910": "net = nn.SequentialCell([*layers, nn.Dense(64, 4)])",
    "GA911": "net = nn.SequentialCell([*layers, nn.Dense(32, 4, weight_init=Normal(1.0))])",
    "GA912": "net = mlp()",
    "GA913": "net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)]).to_float(ms.float16)",
    "GA914": 'return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), lr, 0.9)}',
    "GA915": 'return {"net": net, "optimizer": nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-2)}',
    "GA916": 'return {"net": net, "optimizer": nn.Momentum(net.trainable_params(), lr, 0.9)}',
    "GA950": "self.softplus = NaiveSoftplus()",  # the first layer whose output was not finite
    "GA951": "net = Net()",
    "GA952": "net = Net()",
    "GA953": "net = Net()",
    "GA954": "net = Net()",
    "GA955": "net = Net()",
    "GA956": "self.fc = nn.Dense(16, 32)",
    "GA957": "self.fc = nn.Dense(16, 32)",
    "GA958": "self.fc = nn.Dense(16, 32)",
    "GA959": "net = Net()",
    "GA960": "self.fc = nn.Dense(16, 32, bias_init=Tensor(np.full(32, -50.0, np.float32)))",
    "GA961": "net = Net()",
    "GA962": "self.fc = nn.Dense(16, 32)",
    "GA963": "net, optimizer = network()",
    "GA964": "net, optimizer = network()",
    "GA965": "net = network(SIGMA)",
    "GA966": "net, optimizer, record = run(",
    "GA967": "self.hidden = nn.Dense(16, 32)",
    "GA968": "self.hidden = nn.Dense(16, 32)",
}


@pytest.mark.parametrize("check_id", IDS)
def test_a_bad_samples_finding_points_at_the_line_that_creates_what_it_flags(check_id):
    report, log = located_sample_log(SAMPLES / check_id / "bad.py")
    found = [
        (finding, result)
        for finding, result in zip(report.findings, log["runs"][0]["results"])
        if finding.reported_by(check_id)
    ]
    assert found
    expected = LINES.get(check_id, ())
    for finding, result in found:
        physical = result["locations"][0]["physicalLocation"]
        if check_id in DATA:
            assert physical == {"artifactLocation": {"uri": "factory.py"}, "region": {"startLine": 1}}
            continue
        assert physical["artifactLocation"]["uri"] != "factory.py", (finding.subject, "not located")
        text = _line_text(physical)
        assert text in ((expected,) if isinstance(expected, str) else expected), (finding.subject, text)


def test_every_check_has_its_line_or_is_about_data():
    assert {c if isinstance(c, str) else c.values[0] for c in IDS} == set(LINES) | DATA
