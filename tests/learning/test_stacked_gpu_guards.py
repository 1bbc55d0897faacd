"""The two guards of :class:`pate_study.learning.stacked.StackedModule` that a GPU run showed were needed
(H100, 2026-11-22): BatchNorm kept in float32 under bf16 autocast, and teachers run in chunks when one
``vmap`` call's grouped convolution would pass CUDA's 2^31-element limit. Both are checked on the CPU."""

import numpy as np
import pytest
import torch
from torch import nn

from pate_study.learning.stacked import (
    StackedModule,
    keep_batch_norm_float32,
    largest_activation_elements,
    teachers_per_call,
)


def conv_bn_net() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))


def stack(n: int = 4) -> StackedModule:
    return StackedModule.from_factory(conv_bn_net, np.arange(3 * n).reshape(n, 3))


class ToBfloat16(nn.Module):
    """Stands in for a convolution under CUDA autocast: hands BatchNorm a bf16 tensor (CPU autocast does not
    reach inside ``vmap``, so it cannot be used to show this on the CPU)."""

    def forward(self, x):
        return x.to(torch.bfloat16)


def test_stacked_batch_norm_gets_float32_input_when_the_layer_before_gives_bf16():
    seen = []
    m = StackedModule.from_factory(
        lambda: nn.Sequential(nn.Flatten(), ToBfloat16(), nn.BatchNorm1d(64)), np.arange(12).reshape(4, 3)
    )
    bn = m.base[2]
    bn.register_forward_hook(lambda mod, args, out: seen.append((args[0].dtype, out.dtype)))
    src = m.source(np.random.default_rng(0).random((6, 1, 8, 8), dtype=np.float32))
    out = m.forward(m.params(), m.buffers(), src, torch.arange(5), training=True)
    assert seen and set(seen) == {(torch.float32, torch.float32)}
    assert out.dtype == torch.float32


def test_keep_batch_norm_float32_counts_layers_and_leaves_others():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert keep_batch_norm_float32(net) == 2
    x = torch.ones(3, 2, dtype=torch.float64)
    assert net[1](x).dtype == torch.float32  # cast up to float32, as under autocast


def test_largest_activation_is_the_largest_module_input_or_output():
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.Flatten(), nn.Linear(144, 1000))
    # conv output 2 x 4 x 6 x 6 = 288; linear output 2 x 1000 = 2000; input 2 x 1 x 8 x 8 = 128
    assert largest_activation_elements(net.to("meta"), (2, 1, 8, 8)) == 2000


@pytest.mark.parametrize(
    "per, n, limit, expected", [(1000, 10, 3000, 3), (5000, 10, 3000, 1), (10, 10, 3000, 10), (0, 7, 3000, 7)]
)
def test_teachers_per_call(per, n, limit, expected):
    assert teachers_per_call(per, n, limit) == expected


def test_chunked_teachers_give_the_unchunked_outputs_buffers_and_gradients():
    rng = np.random.default_rng(1)
    X = rng.random((8, 1, 8, 8), dtype=np.float32)
    rows = torch.as_tensor(rng.integers(0, 8, size=(4, 5)))
    results = []
    for limit in (2**31 - 1, 2 * 5 * 4 * 6 * 6):  # everything in one call | two teachers per call
        m = stack()
        m.max_kernel_elements = limit
        calls = []
        m.base.register_forward_hook(lambda mod, args, out: calls.append(args[0].device.type))
        params = [p.requires_grad_() for p in m.params()]
        buffers = m.buffers()
        out = m.forward(params, buffers, m.source(X), rows, training=True)
        out.square().sum().backward()
        results.append(
            (out.detach(), [b.clone() for b in buffers], [p.grad.clone() for p in params], calls.count("cpu"))
        )
    (o1, b1, g1, calls1), (o2, b2, g2, calls2) = results
    assert (calls1, calls2) == (1, 2)  # one vmap call | two chunks of two teachers
    torch.testing.assert_close(o2, o1)
    for a, b in zip(b2, b1):  # BatchNorm's running statistics updated through the chunk views
        torch.testing.assert_close(a, b)
    assert any(not torch.equal(b, c) for b, c in zip(b1, stack().buffers()))  # ... and they did change
    for a, b in zip(g2, g1):
        torch.testing.assert_close(a, b)


def test_device_variable_overrides_the_automatic_choice(monkeypatch):
    from pate_study.core.device import choose_device

    monkeypatch.setenv("PATE_STUDY_DEVICE", "cpu")
    assert choose_device(None).type == "cpu"
    monkeypatch.setenv("PATE_STUDY_DEVICE", "tpu")
    with pytest.raises(ValueError, match="PATE_STUDY_DEVICE='tpu'"):
        choose_device(None)
    assert choose_device("cpu").type == "cpu"  # an explicit device wins
