"""PyTorch twins of the xwires architectures (trainers/architectures.cc).

Each class builds exactly the graph, parameter names and layouts that xwires
writes to its weights files, so `model.load_state_dict(h5_tensors, strict=True)`
works. vgg, resnet and densenet reuse torchvision's building blocks and names
with the CIFAR changes documented in docs/architectures.md. Needs
python3-torch and python3-torchvision; importing this module does not need
the compiled part of the package (tests/fixtures/torch_models/xw_models.py
loads it by path).
"""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


def scaled(channels, width):
    """Channel count under a width multiplier: round(c * width), at least 1."""
    return max(1, int(round(channels * width)))


class MLP(nn.Module):
    """Flatten -> (fcI -> ReLU) x depth -> fc{depth+1}; hidden = 512 * width."""

    def __init__(self, in_shape, num_classes=10, width=1.0, depth=2):
        super().__init__()
        c, h, w = in_shape
        hidden = scaled(512, width)
        dims = [c * h * w] + [hidden] * depth + [num_classes]
        self.n = depth + 1
        for i in range(self.n):
            setattr(self, f"fc{i + 1}", nn.Linear(dims[i], dims[i + 1]))

    def forward(self, x):
        x = torch.flatten(x, 1)
        for i in range(self.n):
            x = getattr(self, f"fc{i + 1}")(x)
            if i + 1 < self.n:
                x = F.relu(x)
        return x


class SimpleCNN(nn.Module):
    """conv1-bn1-relu-maxpool2, conv2-bn2-relu-maxpool2, fc1-relu, fc2."""

    def __init__(self, in_shape, num_classes=10, width=1.0):
        super().__init__()
        c, h, w = in_shape
        c1, c2, hid = scaled(32, width), scaled(64, width), scaled(128, width)
        self.conv1 = nn.Conv2d(c, c1, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c1)
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c2)
        self.fc1 = nn.Linear(c2 * (h // 4) * (w // 4), hid)
        self.fc2 = nn.Linear(hid, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


VGG_CFGS = {
    "vgg11": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "vgg16": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M"],
}


class VGG(nn.Module):
    """torchvision VGG (no BN) with the CIFAR head: no adaptive pool,
    classifier.0 takes 512 * (H/32) * (W/32) inputs (512 on 32x32)."""

    def __init__(self, name, in_shape, num_classes=10, width=1.0, dropout=0.5):
        super().__init__()
        c, h, w = in_shape
        layers = []
        for v in VGG_CFGS[name]:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                v = scaled(v, width)
                layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        hid = scaled(4096, width)
        self.classifier = nn.Sequential(
            nn.Linear(c * (h // 32) * (w // 32), hid), nn.ReLU(True), nn.Dropout(dropout),
            nn.Linear(hid, hid), nn.ReLU(True), nn.Dropout(dropout),
            nn.Linear(hid, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class CifarResNet(nn.Module):
    """torchvision ResNet names (conv1, bn1, layerK.I..., fc) with the CIFAR
    stem: conv1 3x3 stride 1, no max-pool. Blocks are torchvision's."""

    def __init__(self, block, layers, planes, in_shape, num_classes=10):
        super().__init__()
        from torchvision.models.resnet import conv1x1
        c = in_shape[0]
        self.inplanes = planes[0]
        self.conv1 = nn.Conv2d(c, self.inplanes, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.n = len(layers)
        for k, (n, p) in enumerate(zip(layers, planes)):
            stride = 1 if k == 0 else 2
            downsample = None
            if stride != 1 or self.inplanes != p * block.expansion:
                downsample = nn.Sequential(conv1x1(self.inplanes, p * block.expansion, stride),
                                           nn.BatchNorm2d(p * block.expansion))
            blocks = [block(self.inplanes, p, stride, downsample)]
            self.inplanes = p * block.expansion
            blocks += [block(self.inplanes, p) for _ in range(1, n)]
            setattr(self, f"layer{k + 1}", nn.Sequential(*blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(self.inplanes, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        for k in range(self.n):
            x = getattr(self, f"layer{k + 1}")(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet(name, in_shape, num_classes=10, width=1.0, depth=None):
    """resnet20 (depth 6n+2, default 20), resnet18 or resnet50 with the CIFAR stem."""
    from torchvision.models.resnet import BasicBlock, Bottleneck
    if name == "resnet20":
        depth = depth or 20
        n = (depth - 2) // 6
        return CifarResNet(BasicBlock, [n] * 3, [scaled(p, width) for p in (16, 32, 64)],
                           in_shape, num_classes)
    planes = [scaled(p, width) for p in (64, 128, 256, 512)]
    if name == "resnet18":
        return CifarResNet(BasicBlock, [2, 2, 2, 2], planes, in_shape, num_classes)
    return CifarResNet(Bottleneck, [3, 4, 6, 3], planes, in_shape, num_classes)


def densenet121(in_shape, num_classes=10, width=1.0):
    """torchvision DenseNet-121 (bn_size 4, growth 32 * width, 2 * growth initial
    features) with features.conv0 3x3 stride 1 and no pool0."""
    from torchvision.models.densenet import DenseNet
    g = scaled(32, width)
    m = DenseNet(growth_rate=g, block_config=(6, 12, 24, 16), num_init_features=2 * g,
                 bn_size=4, num_classes=num_classes)
    feats = OrderedDict()
    for k, v in m.features.named_children():
        if k == "conv0":
            v = nn.Conv2d(in_shape[0], 2 * g, 3, 1, 1, bias=False)
        if k != "pool0":
            feats[k] = v
    m.features = nn.Sequential(feats)
    return m


def build(arch, in_shape=(3, 32, 32), num_classes=10, width=1.0, depth=None, dropout=0.5):
    """The twin of xwires architecture `arch` (randomly initialised).

    in_shape: (C, H, W) of the images; depth None: the architecture's own
    (mlp hidden layers, resnet20's 6n+2). ValueError for an unknown arch.
    """
    if arch == "mlp":
        return MLP(in_shape, num_classes, width, depth or 2)
    if arch == "simple_cnn":
        return SimpleCNN(in_shape, num_classes, width)
    if arch in VGG_CFGS:
        return VGG(arch, in_shape, num_classes, width, dropout)
    if arch.startswith("resnet"):
        return resnet(arch, in_shape, num_classes, width, depth)
    if arch == "densenet121":
        return densenet121(in_shape, num_classes, width)
    raise ValueError(arch)


def load(spec, state_dict):
    """A twin of `spec` holding `state_dict`, loaded strict, in eval mode.

    spec: dict with arch, input_shape (C, H, W), num_classes, width, depth
    (0: the architecture's own) and dropout, as Dataset.model_spec gives it.
    state_dict: name -> numpy array (shared with the tensors, not copied).
    """
    model = build(spec["arch"], tuple(spec["input_shape"]), spec["num_classes"],
                  spec["width"], spec["depth"] or None, spec["dropout"])
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state_dict.items()},
                          strict=True)
    return model.eval()
