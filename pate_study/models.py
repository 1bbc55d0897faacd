"""Network architectures of the source documents, in plain torch.

* :func:`ecg_mlp` -- multilayer perceptron for 187-sample ECG beats (Visca 2021 / MAKE 2021
  Fig 4.14; layer sizes are only in a figure image, so widths are parameters).
* :func:`web_fc_net` -- Sosa (2021) Fig 4.1 fully connected net with one real output.
  500-512-128-1 has 322,305 parameters, which fits the thesis' "322.000 trainable parameters"
  (an inference, see notes/sosa2021-web-requests.md).
* :class:`ResNetLogMel` -- ResNet-18 layout (BasicBlocks, Muschiol 2021 Table 4.2) for a 1-channel
  log-Mel "image" (time x Mel), with the thesis' classifier head FC-ReLU-BN-Dropout. Written in
  plain torch (no torchvision), randomly initialised (the thesis fine-tuned ImageNet weights).
* :class:`EmbeddingMLP` -- MLP over 128-d Audio Set embeddings, frames mean- or max-pooled.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = [
    "mlp", "ecg_mlp", "web_fc_net", "BasicBlock", "ResNetLogMel", "EmbeddingMLP", "count_parameters",
]


def _check_positive(name: str, value: int) -> None:
    if int(value) != value or value < 1:
        raise ValueError(f"{name}={value!r}: expected a positive integer")


def _check_dropout(dropout: float) -> None:
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout={dropout!r}: expected a probability in [0, 1)")


def mlp(in_features: int, hidden: Sequence[int], out_features: int, dropout: float = 0.0) -> nn.Sequential:
    """Linear-ReLU(-Dropout) stack ending in a linear layer with ``out_features`` logits."""
    _check_positive("in_features", in_features)
    _check_positive("out_features", out_features)
    for h in hidden:
        _check_positive("hidden width", h)
    _check_dropout(dropout)
    layers: list[nn.Module] = []
    width = in_features
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        width = h
    layers.append(nn.Linear(width, out_features))
    return nn.Sequential(*layers)


def ecg_mlp(in_features: int = 187, n_classes: int = 5, hidden: Sequence[int] = (128, 64),
            dropout: float = 0.0) -> nn.Sequential:
    """MLP for ECG beats (187 samples at 125 Hz, 5 classes); widths are a documented choice."""
    return mlp(in_features, hidden, n_classes, dropout)


def web_fc_net(in_features: int = 500, hidden: Sequence[int] = (512, 128), dropout: float = 0.0) -> nn.Sequential:
    """Sosa (2021) web-request net: one real-valued output (a logit); 322,305 parameters by default."""
    return mlp(in_features, hidden, 1, dropout)


class BasicBlock(nn.Module):
    """ResNet BasicBlock (He et al. 2016): two 3x3 convs with BN and an identity/projection shortcut."""

    def __init__(self, in_ch: int, out_ch: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class ResNetLogMel(nn.Module):
    """ResNet for log-Mel input ``[batch, frames, mels]`` or ``[batch, 1, frames, mels]``.

    Layout of Muschiol (2021) Table 4.2: 7x7/2 conv @ base width, BN, ReLU, 3x3/2 max-pool, four
    stages of BasicBlocks (``blocks=(2, 2, 2, 2)`` is ResNet-18, ``(3, 4, 6, 3)`` ResNet-34) with
    widths ``base_width * (1, 2, 4, 8)``, global average pooling, then the head
    ``FC(head[0]) ReLU BN Dropout, FC(head[1]) ReLU BN Dropout, FC(n_classes)``.
    """

    def __init__(self, n_classes: int, blocks: Sequence[int] = (2, 2, 2, 2), base_width: int = 64,
                 head: Sequence[int] = (512, 256), dropout: float = 0.5) -> None:
        super().__init__()
        _check_positive("n_classes", n_classes)
        _check_positive("base_width", base_width)
        _check_dropout(dropout)
        if len(blocks) < 1 or any(int(b) != b or b < 1 for b in blocks):
            raise ValueError(f"blocks={blocks!r}: expected a non-empty sequence of positive integers")
        self.stem = nn.Sequential(
            nn.Conv2d(1, base_width, 7, 2, 3, bias=False), nn.BatchNorm2d(base_width), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        )
        stages: list[nn.Module] = []
        in_ch = base_width
        for i, n_blocks in enumerate(blocks):
            out_ch = base_width * 2 ** i
            stride = 1 if i == 0 else 2
            layers = [BasicBlock(in_ch, out_ch, stride)] + [BasicBlock(out_ch, out_ch) for _ in range(n_blocks - 1)]
            stages.append(nn.Sequential(*layers))
            in_ch = out_ch
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        head_layers: list[nn.Module] = []
        for h in head:
            _check_positive("head width", h)
            head_layers += [nn.Linear(in_ch, h), nn.ReLU(), nn.BatchNorm1d(h), nn.Dropout(dropout)]
            in_ch = h
        head_layers.append(nn.Linear(in_ch, n_classes))
        self.head = nn.Sequential(*head_layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 3:
            x = x.unsqueeze(1)
        if x.dim() != 4 or x.shape[1] != 1:
            raise ValueError(f"x of shape {tuple(x.shape)}: expected [batch, frames, mels] or [batch, 1, frames, mels]")
        x = self.stages(self.stem(x))
        return self.head(torch.flatten(self.pool(x), 1))


class EmbeddingMLP(nn.Module):
    """MLP over Audio Set embeddings: input ``[batch, frames, dim]`` (pooled over frames) or ``[batch, dim]``."""

    def __init__(self, n_classes: int, in_features: int = 128, hidden: Sequence[int] = (256, 256),
                 dropout: float = 0.2, pool: str = "mean") -> None:
        super().__init__()
        if pool not in ("mean", "max"):
            raise ValueError(f"pool={pool!r}: expected 'mean' or 'max'")
        self.pool = pool
        self.net = mlp(in_features, hidden, n_classes, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 3:
            x = x.mean(dim=1) if self.pool == "mean" else x.amax(dim=1)
        if x.dim() != 2:
            raise ValueError(f"x of shape {tuple(x.shape)}: expected [batch, frames, dim] or [batch, dim]")
        return self.net(x)


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
