"""Network architectures of the source documents, in plain torch.

* :func:`ecg_mlp` -- multilayer perceptron for 187-sample ECG beats (Visca 2021 / MAKE 2021
  Fig 4.14; layer sizes are only in a figure image, so widths are parameters).
* :func:`web_fc_net` -- Sosa (2021) Fig 4.1 fully connected net with one real output.
  500-512-128-1 has 322,305 parameters, which fits the thesis' "322.000 trainable parameters"
  (our inference: the thesis prints the count, and its Fig 4.1 is an image without widths).
* :class:`ResNetLogMel` -- ResNet-18 layout (BasicBlocks, Muschiol 2021 Table 4.2) for a 1-channel
  log-Mel "image" (time x Mel), with the thesis' classifier head FC-ReLU-BN-Dropout. Written in
  plain torch (no torchvision), randomly initialised (the thesis fine-tuned ImageNet weights).
* :class:`VGGLogMel` -- VGG-11/19 (configurations A/E of Simonyan & Zisserman 2015, no BN, as
  Muschiol 2021 Table 4.2; 3x3 kernels, the table's "2x2" read as a typo) for 1-channel log-Mel,
  global average pooling and the thesis' head FC(4096)-ReLU-Dropout x2.
* :func:`logmel_model` -- "resnet18" / "resnet34" / "vgg11" / "vgg19" by name.
* :func:`load_imagenet_weights` -- copy a torchvision-format ImageNet state dict (a file the user
  gives) into a log-Mel model: key renaming, conv1 summed over RGB for one input channel, heads
  left at their random init (the thesis' heads are custom). Without weights a model stays at its
  random init and :func:`weights_stamp` says so (the thesis' own "without transfer learning" arm).
* :class:`EmbeddingMLP` -- MLP over 128-d Audio Set embeddings, frames mean- or max-pooled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

__all__ = [
    "mlp",
    "ecg_mlp",
    "web_fc_net",
    "BasicBlock",
    "ResNetLogMel",
    "VGGLogMel",
    "EmbeddingMLP",
    "count_parameters",
    "LOGMEL_ARCHITECTURES",
    "logmel_model",
    "WeightsReport",
    "load_imagenet_weights",
    "weights_stamp",
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


def ecg_mlp(
    in_features: int = 187, n_classes: int = 5, hidden: Sequence[int] = (128, 64), dropout: float = 0.0
) -> nn.Sequential:
    """MLP for ECG beats (187 samples at 125 Hz, 5 classes); widths are a documented choice."""
    return mlp(in_features, hidden, n_classes, dropout)


def web_fc_net(in_features: int = 500, hidden: Sequence[int] = (512, 128), dropout: float = 0.0) -> nn.Sequential:
    """Sosa (2021) web-request net: one real-valued output (a logit); 322,305 parameters by default."""
    return mlp(in_features, hidden, 1, dropout)


def classifier_head(
    in_features: int, widths: Sequence[int], n_classes: int, dropout: float, batch_norm: bool
) -> nn.Sequential:
    """Muschiol (2021) Table 4.2 heads: per width ``FC ReLU (BN) Dropout``, then ``FC(n_classes)``
    (ResNet heads with BatchNorm, VGG heads without)."""
    layers: list[nn.Module] = []
    for h in widths:
        _check_positive("head width", h)
        layers += [
            nn.Linear(in_features, h),
            nn.ReLU(),
            *([nn.BatchNorm1d(h)] if batch_norm else []),
            nn.Dropout(dropout),
        ]
        in_features = h
    layers.append(nn.Linear(in_features, n_classes))
    return nn.Sequential(*layers)


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

    def __init__(
        self,
        n_classes: int,
        blocks: Sequence[int] = (2, 2, 2, 2),
        base_width: int = 64,
        head: Sequence[int] = (512, 256),
        dropout: float = 0.5,
    ) -> None:
        super().__init__()
        _check_positive("n_classes", n_classes)
        _check_positive("base_width", base_width)
        _check_dropout(dropout)
        if len(blocks) < 1 or any(int(b) != b or b < 1 for b in blocks):
            raise ValueError(f"blocks={blocks!r}: expected a non-empty sequence of positive integers")
        self.stem = nn.Sequential(
            nn.Conv2d(1, base_width, 7, 2, 3, bias=False),
            nn.BatchNorm2d(base_width),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        )
        stages: list[nn.Module] = []
        in_ch = base_width
        for i, n_blocks in enumerate(blocks):
            out_ch = base_width * 2**i
            stride = 1 if i == 0 else 2
            layers = [BasicBlock(in_ch, out_ch, stride)] + [BasicBlock(out_ch, out_ch) for _ in range(n_blocks - 1)]
            stages.append(nn.Sequential(*layers))
            in_ch = out_ch
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = classifier_head(in_ch, head, n_classes, dropout, batch_norm=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(_check_logmel_input(x)))
        return self.head(torch.flatten(self.pool(x), 1))


def _check_logmel_input(x: torch.Tensor) -> torch.Tensor:
    if x.dim() == 3:
        x = x.unsqueeze(1)
    if x.dim() != 4 or x.shape[1] != 1:
        raise ValueError(f"x of shape {tuple(x.shape)}: expected [batch, frames, mels] or [batch, 1, frames, mels]")
    return x


# torchvision VGG configurations (Simonyan & Zisserman 2015, Table 1): A = VGG-11, E = VGG-19.
VGG_CONFIGS: dict[str, tuple] = {
    "vgg11": (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
    "vgg19": (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"),
}


class VGGLogMel(nn.Module):
    """VGG for log-Mel input ``[batch, frames, mels]`` or ``[batch, 1, frames, mels]``.

    ``features`` has torchvision's layer order (Conv3x3-ReLU ... MaxPool2x2), so the indices of an
    ImageNet state dict's ``features.<i>`` keys match; ``width_scale`` divides every width (small
    test models). Head (Muschiol 2021 Table 4.2): global average pool, then
    ``FC(head[k]) ReLU Dropout`` per entry of ``head``, then ``FC(n_classes)``.
    """

    def __init__(
        self,
        n_classes: int,
        config: str = "vgg11",
        head: Sequence[int] = (4096, 4096),
        dropout: float = 0.5,
        width_scale: int = 1,
    ) -> None:
        super().__init__()
        _check_positive("n_classes", n_classes)
        _check_positive("width_scale", width_scale)
        _check_dropout(dropout)
        if config not in VGG_CONFIGS:
            raise ValueError(f"config={config!r}: expected one of {sorted(VGG_CONFIGS)}")
        layers: list[nn.Module] = []
        in_ch = 1
        for v in VGG_CONFIGS[config]:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                out_ch = max(1, int(v) // width_scale)
                layers += [nn.Conv2d(in_ch, out_ch, 3, padding=1), nn.ReLU(inplace=True)]
                in_ch = out_ch
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = classifier_head(in_ch, head, n_classes, dropout, batch_norm=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(_check_logmel_input(x))
        return self.head(torch.flatten(self.pool(x), 1))


LOGMEL_ARCHITECTURES = ("resnet18", "resnet34", "vgg11", "vgg19")
_RESNET_BLOCKS = {"resnet18": (2, 2, 2, 2), "resnet34": (3, 4, 6, 3)}


def logmel_model(
    name: str, n_classes: int, *, width_scale: int = 1, dropout: float = 0.5, head: Sequence[int] | None = None
) -> nn.Module:
    """A Muschiol (2021) Table 4.2 network for 1-channel log-Mel by name, randomly initialised
    (stamped ``weights_origin = "random init"``; :func:`load_imagenet_weights` replaces it).
    ``width_scale`` > 1 divides every convolution width (for tests and CPU smoke runs)."""
    if name in _RESNET_BLOCKS:
        _check_positive("width_scale", width_scale)
        model: nn.Module = ResNetLogMel(
            n_classes,
            _RESNET_BLOCKS[name],
            base_width=max(1, 64 // width_scale),
            head=(512, 256) if head is None else head,
            dropout=dropout,
        )
    elif name in VGG_CONFIGS:
        model = VGGLogMel(
            n_classes, name, head=(4096, 4096) if head is None else head, dropout=dropout, width_scale=width_scale
        )
    else:
        raise ValueError(f"architecture {name!r}: expected one of {LOGMEL_ARCHITECTURES}")
    model.weights_origin = "random init"
    model.architecture = name
    return model


# ----------------------------------------------------------------------------- ImageNet weights
@dataclass
class WeightsReport:
    """What :func:`load_imagenet_weights` did: ``loaded`` (our key <- torchvision key), keys of the
    file it skipped on purpose (``skipped``: the ImageNet classifier), our parameters it left at
    their init (``kept_init``: the custom head) and the stamp it set on the model."""

    source: str
    loaded: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    kept_init: list[str] = field(default_factory=list)
    stamp: str = ""


_RESNET_RENAMES = (
    (r"^conv1\.", "stem.0."),
    (r"^bn1\.", "stem.1."),
    (r"^layer(\d+)\.(\d+)\.downsample\.", lambda m: f"stages.{int(m.group(1)) - 1}.{m.group(2)}.shortcut."),
    (r"^layer(\d+)\.(\d+)\.", lambda m: f"stages.{int(m.group(1)) - 1}.{m.group(2)}."),
)


def _our_key(model: nn.Module, tv_key: str) -> str | None:
    """Our parameter name for a torchvision key, or None for keys of the ImageNet classifier."""
    if isinstance(model, ResNetLogMel):
        if tv_key.startswith("fc."):
            return None
        for pattern, repl in _RESNET_RENAMES:
            new, n = re.subn(pattern, repl, tv_key)
            if n:
                return new
        return tv_key
    return None if tv_key.startswith("classifier.") else tv_key  # VGG: features.<i> match torchvision


def _read_state_dict(weights: str | Path | dict) -> tuple[dict[str, torch.Tensor], str]:
    if isinstance(weights, dict):
        return weights, "state dict given in memory"
    path = Path(weights)
    if not path.is_file():
        raise FileNotFoundError(
            f"ImageNet weights {path}: no such file; pass the path of a torchvision state dict "
            f"(e.g. resnet18-f37072fd.pth from download.pytorch.org/models) or no weights for random init"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad file
        raise ValueError(f"ImageNet weights {path}: not a readable torch state dict ({exc})") from exc
    if not isinstance(state, dict):
        raise ValueError(f"ImageNet weights {path}: expected a state dict (name -> tensor), got {type(state).__name__}")
    return state, str(path)


def load_imagenet_weights(model: nn.Module, weights: str | Path | dict) -> WeightsReport:
    """Copy torchvision ImageNet weights (``torchvision.models.resnet18/34`` or ``vgg11/19`` layout)
    into ``model`` in place. Keys are renamed (``layer2.0.downsample.1.weight`` ->
    ``stages.1.0.shortcut.1.weight``; VGG ``features.<i>`` keep their names); the first convolution,
    ``[out, 3, k, k]`` in the file, is summed over its RGB channels to ``[out, 1, k, k]`` (a grey
    image x gives the same response as the RGB image (x, x, x)); with ``width_scale`` models this
    fails (widths differ). The ImageNet classifier (``fc``, ``classifier``) is skipped and the
    thesis' custom head keeps its init. Every backbone parameter and buffer of ``model`` must be
    covered and every shape must match, else ValueError naming the key and both shapes.
    """
    if not isinstance(model, (ResNetLogMel, VGGLogMel)):
        raise ValueError(f"load_imagenet_weights: model {type(model).__name__} is not a ResNetLogMel or VGGLogMel")
    state, source = _read_state_dict(weights)
    ours = model.state_dict()
    report = WeightsReport(source)
    new_state: dict[str, torch.Tensor] = {}
    for tv_key, value in state.items():
        key = _our_key(model, tv_key)
        if key is None:
            report.skipped.append(tv_key)
            continue
        if key not in ours:
            raise ValueError(
                f"ImageNet weights {source}: key {tv_key!r} (ours {key!r}) has no counterpart in "
                f"{getattr(model, 'architecture', type(model).__name__)}; is it the right architecture?"
            )
        value = torch.as_tensor(value)
        target = ours[key]
        if value.dim() == 4 and target.dim() == 4 and value.shape[1] == 3 and target.shape[1] == 1:
            value = value.sum(dim=1, keepdim=True)
        if tuple(value.shape) != tuple(target.shape):
            raise ValueError(
                f"ImageNet weights {source}: {tv_key!r} has shape {tuple(value.shape)}, "
                f"{key!r} expects {tuple(target.shape)}; use the file of the same architecture "
                f"at full width (width_scale=1)"
            )
        new_state[key] = value.to(target.dtype)
        report.loaded[key] = tv_key
    head_prefix = "head."
    missing = [k for k in ours if k not in new_state and not k.startswith(head_prefix)]
    if missing:
        raise ValueError(
            f"ImageNet weights {source}: {len(missing)} backbone entries of the model are not in the "
            f"file (first: {missing[:3]}); is it a torchvision state dict of this architecture?"
        )
    report.kept_init = [k for k in ours if k.startswith(head_prefix)]
    model.load_state_dict(new_state, strict=False)
    report.stamp = (
        f"ImageNet weights from {Path(source).name if source != 'state dict given in memory' else source} "
        f"({len(report.loaded)} tensors; conv1 summed over RGB; head random init)"
    )
    model.weights_origin = report.stamp
    return report


def weights_stamp(model: nn.Module) -> str:
    """How ``model``'s weights were initialised: "random init" or the ImageNet source."""
    return getattr(model, "weights_origin", "random init")


class EmbeddingMLP(nn.Module):
    """MLP over Audio Set embeddings: input ``[batch, frames, dim]`` (pooled over frames) or ``[batch, dim]``."""

    def __init__(
        self,
        n_classes: int,
        in_features: int = 128,
        hidden: Sequence[int] = (256, 256),
        dropout: float = 0.2,
        pool: str = "mean",
    ) -> None:
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
