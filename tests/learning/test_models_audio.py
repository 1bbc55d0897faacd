"""Log-Mel networks of Muschiol 2021 Table 4.2 and the torchvision ImageNet weight loader.

The state dicts are built here from torchvision's published layout (no torchvision needed), so
the test does not reuse the loader's own renaming rules.
"""

import pytest
import torch
import torch.nn.functional as F

from pate_study.learning.models import (
    LOGMEL_ARCHITECTURES,
    ResNetLogMel,
    VGGLogMel,
    load_imagenet_weights,
    logmel_model,
    weights_stamp,
)

_RESNET_LAYERS = {"resnet18": (2, 2, 2, 2), "resnet34": (3, 4, 6, 3)}
_VGG_CONVS = {
    "vgg11": (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
    "vgg19": (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"),
}


def _bn(prefix, ch, g):
    return {
        f"{prefix}.weight": torch.rand(ch, generator=g) + 0.5,
        f"{prefix}.bias": torch.randn(ch, generator=g),
        f"{prefix}.running_mean": torch.randn(ch, generator=g),
        f"{prefix}.running_var": torch.rand(ch, generator=g) + 0.5,
        f"{prefix}.num_batches_tracked": torch.tensor(7),
    }


def torchvision_resnet_state(name, seed=0):
    """torchvision.models.<name>().state_dict() layout with random values."""
    g = torch.Generator().manual_seed(seed)
    sd = {"conv1.weight": torch.randn(64, 3, 7, 7, generator=g), **_bn("bn1", 64, g)}
    in_ch = 64
    for li, n in enumerate(_RESNET_LAYERS[name], start=1):
        out = 64 * 2 ** (li - 1)
        for b in range(n):
            p = f"layer{li}.{b}"
            c_in = in_ch if b == 0 else out
            sd[f"{p}.conv1.weight"] = torch.randn(out, c_in, 3, 3, generator=g)
            sd.update(_bn(f"{p}.bn1", out, g))
            sd[f"{p}.conv2.weight"] = torch.randn(out, out, 3, 3, generator=g)
            sd.update(_bn(f"{p}.bn2", out, g))
            if b == 0 and li > 1:
                sd[f"{p}.downsample.0.weight"] = torch.randn(out, c_in, 1, 1, generator=g)
                sd.update(_bn(f"{p}.downsample.1", out, g))
        in_ch = out
    sd["fc.weight"], sd["fc.bias"] = torch.randn(1000, 512, generator=g), torch.randn(1000, generator=g)
    return sd


def torchvision_vgg_state(name, seed=0):
    g = torch.Generator().manual_seed(seed)
    sd, i, in_ch = {}, 0, 3
    for v in _VGG_CONVS[name]:
        if v == "M":
            i += 1
            continue
        sd[f"features.{i}.weight"] = torch.randn(v, in_ch, 3, 3, generator=g)
        sd[f"features.{i}.bias"] = torch.randn(v, generator=g)
        in_ch, i = v, i + 2
    for j, (a, b) in zip((0, 3, 6), ((25088, 4), (4, 4), (4, 1000))):  # classifier (shrunk: skipped anyway)
        sd[f"classifier.{j}.weight"], sd[f"classifier.{j}.bias"] = (
            torch.randn(b, a, generator=g),
            torch.randn(b, generator=g),
        )
    return sd


def test_torchvision_layout_sizes():
    """The built layouts have torchvision's entry counts (resnet18: 122, vgg11: 16 conv + 6 fc)."""
    assert len(torchvision_resnet_state("resnet18")) == 122
    assert len(torchvision_vgg_state("vgg11")) == 22


@pytest.mark.parametrize("name", LOGMEL_ARCHITECTURES)
def test_loader_maps_every_key(name):
    model = logmel_model(name, n_classes=5, head=(8,) if name.startswith("vgg") else None)
    assert weights_stamp(model) == "random init"
    sd = torchvision_resnet_state(name) if name.startswith("resnet") else torchvision_vgg_state(name)
    head_before = {k: v.clone() for k, v in model.state_dict().items() if k.startswith("head.")}
    report = load_imagenet_weights(model, sd)
    classifier = [k for k in sd if k.startswith(("fc.", "classifier."))]
    assert sorted(report.skipped) == sorted(classifier)
    assert sorted(report.loaded.values()) == sorted(k for k in sd if k not in classifier)  # every key used
    ours = model.state_dict()
    assert set(report.loaded) | set(report.kept_init) == set(ours)
    first = "stem.0.weight" if name.startswith("resnet") else "features.0.weight"
    tv_first = "conv1.weight" if name.startswith("resnet") else "features.0.weight"
    torch.testing.assert_close(ours[first], sd[tv_first].sum(1, keepdim=True))
    for k, tv in report.loaded.items():
        if k != first:
            torch.testing.assert_close(ours[k], sd[tv].to(ours[k].dtype))
    for k, v in head_before.items():
        torch.testing.assert_close(ours[k], v)  # custom head keeps its init
    assert "ImageNet" in weights_stamp(model) and "conv1 summed over RGB" in weights_stamp(model)


def test_grey_input_equals_rgb_copy():
    """Summing conv1 over RGB: a grey clip x responds as the RGB image (x, x, x) does."""
    sd = torchvision_resnet_state("resnet18", seed=3)
    model = logmel_model("resnet18", n_classes=3).eval()
    load_imagenet_weights(model, sd)
    x = torch.randn(2, 1, 40, 64)
    ours = model.stem[0](x)
    rgb = F.conv2d(x.expand(-1, 3, -1, -1), sd["conv1.weight"], stride=2, padding=3)
    torch.testing.assert_close(ours, rgb, rtol=1e-4, atol=1e-4)


def test_loaded_resnet_renames_downsample():
    model = logmel_model("resnet34", n_classes=3)
    report = load_imagenet_weights(model, torchvision_resnet_state("resnet34"))
    assert report.loaded["stages.1.0.shortcut.1.running_var"] == "layer2.0.downsample.1.running_var"
    assert report.loaded["stages.3.2.conv2.weight"] == "layer4.2.conv2.weight"


def test_wrong_weights_give_clear_errors(tmp_path):
    with pytest.raises(ValueError, match=r"layer1\.2\.conv1\.weight.*no counterpart"):
        load_imagenet_weights(logmel_model("resnet18", 3), torchvision_resnet_state("resnet34"))
    with pytest.raises(ValueError, match=r"has shape \(64, 1, 7, 7\).*expects \(4, 1, 7, 7\)"):
        load_imagenet_weights(logmel_model("resnet18", 3, width_scale=16), torchvision_resnet_state("resnet18"))
    with pytest.raises(ValueError, match="backbone entries of the model are not in the file"):
        sd = torchvision_vgg_state("vgg11")
        del sd["features.3.weight"]
        load_imagenet_weights(logmel_model("vgg11", 3, head=(4,)), sd)
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_imagenet_weights(logmel_model("resnet18", 3), tmp_path / "missing.pth")
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="not a readable torch state dict"):
        load_imagenet_weights(logmel_model("resnet18", 3), bad)
    with pytest.raises(ValueError, match="not a ResNetLogMel or VGGLogMel"):
        load_imagenet_weights(torch.nn.Linear(2, 2), {})
    with pytest.raises(ValueError, match="architecture"):
        logmel_model("resnet50", 3)


def test_loader_reads_a_file(tmp_path):
    path = tmp_path / "vgg11.pth"
    torch.save(torchvision_vgg_state("vgg11"), path)
    model = logmel_model("vgg11", 2, head=(4,))
    report = load_imagenet_weights(model, path)
    assert report.source == str(path) and "vgg11.pth" in weights_stamp(model)


@pytest.mark.parametrize("name", LOGMEL_ARCHITECTURES)
def test_logmel_models_shapes_and_backward(name):
    model = logmel_model(name, n_classes=4, width_scale=16, head=(8,))
    assert isinstance(model, ResNetLogMel if name.startswith("resnet") else VGGLogMel)
    x = torch.randn(2, 64, 64)
    out = model(x)
    assert out.shape == (2, 4)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    with pytest.raises(ValueError, match="expected"):
        model(torch.zeros(2, 3, 10, 64))


def test_vectorised_per_class_metrics_equal_sklearn():
    """metrics.average_precision_per_class / roc_auc_per_class (rank-based, all classes at once) equal
    sklearn's per-class AP and ROC-AUC, ties included; classes without positives are NaN."""
    import numpy as np
    from sklearn.metrics import average_precision_score, roc_auc_score

    from pate_study.learning.metrics import average_precision_per_class, roc_auc_per_class

    rng = np.random.default_rng(0)
    Y = rng.random((300, 12)) < 0.1
    Y[:, 0] = False
    S = np.round(rng.random((300, 12)), 1) + 0.3 * Y  # coarse scores: many ties
    ap, auc = average_precision_per_class(Y, S), roc_auc_per_class(Y, S)
    assert np.isnan(ap[0]) and np.isnan(auc[0])
    np.testing.assert_allclose(ap[1:], average_precision_score(Y[:, 1:], S[:, 1:], average=None), atol=1e-12)
    np.testing.assert_allclose(auc[1:], roc_auc_score(Y[:, 1:], S[:, 1:], average=None), atol=1e-12)
