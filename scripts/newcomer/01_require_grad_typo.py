"""Fine-tune a MobileNetV2 with a frozen backbone, but the freeze is spelt ``require_grad``.

The bug: ``p.require_grad = False`` (no s) sets a new attribute and freezes nothing, so the
whole backbone trains with the new head, and the optimizer gets every parameter.
"""

import mindcv
import numpy as np
from mindspore import Tensor, nn

import graphaudit

net = mindcv.create_model("mobilenet_v2_035_96", pretrained=False, num_classes=5)

# freeze the feature extractor, train only the classifier
for p in net.features.get_parameters():
    p.require_grad = False  # typo: should be requires_grad

optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9, weight_decay=4e-5)

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
y = Tensor(np.array([1, 3], np.int32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
print(report)
