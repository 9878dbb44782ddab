"""Transfer learning: the ImageNet head is swapped for a 5-class one after the optimizer was built.

The bug: ``optimizer`` holds the parameters of the old 1000-class classifier; the new head's
weights were never given to it, so they stay at their random start while the backbone trains.
"""

import mindcv
import numpy as np
from mindspore import Tensor, nn

import graphaudit

NUM_CLASSES = 5

net = mindcv.create_model("mobilenet_v2_035_96", pretrained=False)
optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)

# adapt the classifier to our 5 classes
in_features = net.classifier[1].in_channels
net.classifier = nn.SequentialCell([nn.Dropout(p=0.2), nn.Dense(in_features, NUM_CLASSES)])
net.set_train(True)

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
y = Tensor(np.array([0, 4], np.int32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss(), probe=True)
print(report)
