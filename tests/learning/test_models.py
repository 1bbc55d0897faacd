import pytest
import torch

from pate_study.learning.models import EmbeddingMLP, ResNetLogMel, count_parameters, ecg_mlp, web_fc_net


def test_web_net_matches_sosa_parameter_count():
    net = web_fc_net()
    assert count_parameters(net) == 322_305  # Sosa 2021: "322.000 trainable parameters"
    assert net(torch.zeros(4, 500)).shape == (4, 1)


def test_ecg_mlp_shapes():
    net = ecg_mlp(hidden=(32,), dropout=0.1)
    out = net(torch.zeros(3, 187))
    assert out.shape == (3, 5) and out.dtype == torch.float32


def test_resnet_logmel_shapes_and_layout():
    net = ResNetLogMel(n_classes=7, base_width=8, head=(16,), dropout=0.5).eval()
    assert net(torch.zeros(2, 101, 64)).shape == (2, 7)
    assert net(torch.zeros(2, 1, 101, 64)).shape == (2, 7)
    assert len(net.stages) == 4 and [len(s) for s in net.stages] == [2, 2, 2, 2]
    with pytest.raises(ValueError):
        net(torch.zeros(2, 3, 10, 64))


def test_embedding_mlp_pools_frames():
    net = EmbeddingMLP(n_classes=4, hidden=(8,), dropout=0.0).eval()
    x = torch.randn(2, 10, 128)
    torch.testing.assert_close(net(x), net(x.mean(1)))


def test_bad_arguments():
    with pytest.raises(ValueError, match="dropout"):
        ecg_mlp(dropout=1.5)
    with pytest.raises(ValueError, match="pool"):
        EmbeddingMLP(3, pool="sum")
