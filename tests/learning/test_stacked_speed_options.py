"""The speed options of :class:`pate_study.learning.stacked.StackedModule` (memory format, bfloat16 autocast,
``torch.compile``): each gives the default forward's numbers within a stated tolerance, a stack with options
equals its teachers run alone, defaults are today's path, and bad values name the parameter.

Tolerances: float32 paths that only reorder the arithmetic (channels-last kernels, inductor's fused kernels)
agree within ``atol=1e-4, rtol=1e-4`` on O(1) logits and buffers, and gradients within 1e-3 of each tensor's
largest entry (training-mode BatchNorm over 4 clips amplifies float32 reordering: measured up to 2.2e-4 of it);
bfloat16 (8 significand bits, relative rounding 2^-8) within ``atol=0.1`` on O(1) logits (measured: 0.02)."""

import numpy as np
import pytest
import torch
from torch import nn

from pate_study.experiments.audioset import teachers as at
from pate_study.learning.models import logmel_model
from pate_study.learning.partitions import Partitions
from pate_study.learning.stacked import (
    StackedModule,
    autocast_dtype_option,
    compiled_option,
    memory_format_option,
    stack_in_format,
)
from pate_study.learning.train_config import TrainConfig
from pate_study.learning.training import train_stacked

F32 = dict(atol=1e-4, rtol=1e-4)


#: channels-last training on the CPU is refused with one torch thread (a torch 2.13 oneDNN fault): these tests run two
pytestmark = pytest.mark.usefixtures("two_torch_threads")


def resnet() -> nn.Module:
    return logmel_model("resnet18", 5, width_scale=16, head=(8,))


def stack(n: int = 3, factory=resnet, **options) -> StackedModule:
    return StackedModule.from_factory(factory, np.arange(3 * n).reshape(n, 3), **options)


def clips(n: int = 12, frames: int = 32) -> torch.Tensor:
    return torch.randn(n, frames, 16, generator=torch.Generator().manual_seed(0))


def forward(m: StackedModule, X: torch.Tensor, rows: torch.Tensor, training: bool):
    """Logits, updated buffers and parameter gradients of one forward (+ backward of the logits' sum)."""
    params = [p.detach().clone().requires_grad_() for p in m.params()]
    buffers = m.buffers()
    m.set_training(training)
    torch.manual_seed(7)
    z = m.forward(params, buffers, m.source(X), rows, training=training)
    z.float().sum().backward()
    return z.detach().float(), buffers, [p.grad for p in params]


def assert_same_step(a, b) -> None:
    """Two results of :func:`forward` agree: logits and buffers within :data:`F32`, gradients within 1e-3 of
    each gradient tensor's largest entry (module docstring)."""
    (za, ba, ga), (zb, bb, gb) = a, b
    torch.testing.assert_close(za, zb, **F32)
    for x, y in zip(ba, bb):
        torch.testing.assert_close(x.float(), y.float(), **F32)
    assert len(ga) == len(gb)
    for x, y in zip(ga, gb):
        torch.testing.assert_close(x, y, atol=1e-3 * float(y.abs().max()) + 1e-6, rtol=0.0)


# ----------------------------------------------------------------------------- option values
@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"memory_format": "nhwc"}, "memory_format"),
        ({"memory_format": torch.channels_last}, "memory_format"),
        ({"autocast_dtype": "float16"}, "autocast_dtype"),
        ({"autocast_dtype": torch.bfloat16}, "autocast_dtype"),
        ({"compiled": "yes"}, "compiled"),
        ({"compiled": 1}, "compiled"),
    ],
)
def test_bad_option_values_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        stack(2, **kwargs)


def test_bad_option_fails_before_training_starts():
    X = np.zeros((10, 32, 16), np.float32)
    Y = np.zeros((10, 2), bool)
    spec = at.TeacherSpec(batch_size=2, steps=1, eval_every=1, sampler="random")
    with pytest.raises(ValueError, match="^memory_format="):
        at.train_logmel_teachers(
            "resnet18",
            X,
            Y,
            Partitions(np.arange(8).reshape(2, 4)),
            np.arange(8, 10),
            X,
            Y,
            spec,
            width_scale=16,
            head=(4,),
            device="cpu",
            memory_format="NHWC",
        )


def test_channels_last_is_refused_on_the_cpu_with_one_thread_and_taken_with_two():
    """torch 2.13's oneDNN channels-last convolution corrupts the heap in a single-threaded CPU backward (aborts with
    "corrupted double-linked list"): refused in one line naming the option; two threads build the stack."""
    torch.set_num_threads(1)  # the fixture restores the count
    with pytest.raises(ValueError, match=r"^memory_format='channels_last': refused on the CPU with one torch thread"):
        stack(1, memory_format="channels_last")
    stack(1)  # the default layout is unaffected
    torch.set_num_threads(2)
    assert stack(1, memory_format="channels_last").memory_format is torch.channels_last


def test_option_functions_map_values():
    assert memory_format_option("contiguous") is torch.contiguous_format
    assert memory_format_option("channels_last") is torch.channels_last
    assert autocast_dtype_option(None) is None and autocast_dtype_option("bfloat16") is torch.bfloat16
    assert compiled_option(np.bool_(True)) is True


# ----------------------------------------------------------------------------- layouts
def test_default_stack_is_todays_contiguous_stack():
    m = stack(3)
    mods = []
    for s in np.arange(9).reshape(3, 3)[:, 0]:
        torch.manual_seed(int(s))
        mods.append(resnet())
    for name, p in zip(m.param_names, m.params()):
        assert p.is_contiguous()
        assert torch.equal(p, torch.stack([mod.get_parameter(name).detach() for mod in mods]))
    assert m.memory_format is torch.contiguous_format and m.autocast_dtype is None and not m.compiled


def test_stack_in_format_channels_last_per_teacher_slice():
    ts = [torch.randn(6, 3, 3, 3, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    s = stack_in_format(ts, torch.channels_last)
    assert torch.equal(s, torch.stack(ts))
    assert not s.is_contiguous()
    assert all(s[i].is_contiguous(memory_format=torch.channels_last) for i in range(4))
    assert s.reshape(24, 3, 3, 3).is_contiguous(memory_format=torch.channels_last)  # vmap's grouped weight: a view
    assert s.reshape(24, 3, 3, 3)._base is not None
    bias = stack_in_format([torch.ones(5), torch.zeros(5)], torch.channels_last)
    assert bias.is_contiguous() and bias.shape == (2, 5)


def test_channels_last_stack_keeps_its_layout_through_params():
    m = stack(2, memory_format="channels_last")
    conv = [p for p in m.params() if p.dim() == 5]
    assert conv and all(p[0].is_contiguous(memory_format=torch.channels_last) for p in conv)
    # the layouts differ where a slice has several input channels and a kernel larger than 1x1
    differ = [p for p in conv if p.shape[2] > 1 and p.shape[3] * p.shape[4] > 1]
    assert differ and all(not p.is_contiguous() for p in differ)


@pytest.mark.parametrize("training", [False, True])
def test_channels_last_forward_equals_default(training):
    X, rows = clips(), torch.arange(12).reshape(3, 4)
    assert_same_step(
        forward(stack(3, memory_format="channels_last"), X, rows, training), forward(stack(3), X, rows, training)
    )


def test_channels_last_stack_equals_its_teachers_alone():
    X, rows = clips(), torch.arange(12).reshape(3, 4)
    z, _, _ = forward(stack(3, memory_format="channels_last"), X, rows, training=False)
    mods = []
    for s in np.arange(9).reshape(3, 3)[:, 0]:
        torch.manual_seed(int(s))
        mods.append(resnet())
    for i, mod in enumerate(mods):
        alone = StackedModule([mod], np.array([[i, 0, 0]]), memory_format="channels_last")
        zi, _, _ = forward(alone, X, rows[i : i + 1], training=False)
        torch.testing.assert_close(z[i], zi[0], **F32)


# ----------------------------------------------------------------------------- bfloat16 autocast on the CPU
def test_bf16_autocast_runs_convolutions_in_bf16_and_batch_norm_in_float32_on_one_teacher():
    m = stack(1, autocast_dtype="bfloat16")
    seen = {}
    m.base.stem[0].register_forward_hook(lambda mod, a, out: seen.update(conv=out.dtype))
    m.base.stem[1].register_forward_hook(lambda mod, a, out: seen.update(bn_in=a[0].dtype))
    X, rows = clips(4), torch.arange(4).reshape(1, 4)
    z, buffers, grads = forward(m, X, rows, training=True)
    assert seen == {"conv": torch.bfloat16, "bn_in": torch.float32}
    assert all(g.dtype == torch.float32 for g in grads)  # master weights stay float32
    z, _, _ = forward(m, X, rows, training=False)  # running statistics: no batch of 4 to amplify rounding
    z0, _, _ = forward(stack(1), X, rows, training=False)
    torch.testing.assert_close(z, z0, atol=0.1, rtol=0.0)
    assert not torch.equal(z, z0)  # it did change the arithmetic


def test_default_has_no_autocast_on_the_cpu():
    m = stack(1)
    seen = []
    m.base.stem[0].register_forward_hook(lambda mod, a, out: seen.append(out.dtype))
    forward(m, clips(4), torch.arange(4).reshape(1, 4), training=False)
    assert seen == [torch.float32]


# ----------------------------------------------------------------------------- torch.compile
def small_net() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))


@pytest.fixture(scope="module")
def inductor():
    """Skip when TorchInductor cannot compile here (no C++ compiler, unsupported platform)."""
    try:
        torch.compile(lambda t: torch.relu(t) * 2)(torch.ones(3))
    except Exception as exc:  # noqa: BLE001 - any backend failure means: cannot test compilation here
        pytest.skip(f"torch.compile does not work on this machine: {type(exc).__name__}: {exc}")


@pytest.mark.slow
@pytest.mark.parametrize("n", [1])  # n = 2 (vmap) compiled: the loop test below
def test_compiled_forward_equals_default(inductor, n):
    X = torch.randn(8, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    rows = torch.arange(4 * n).reshape(n, 4)
    torch._dynamo.reset()
    assert_same_step(
        forward(stack(n, small_net, compiled=True), X, rows, training=n == 1),
        forward(stack(n, small_net), X, rows, training=n == 1),
    )


@pytest.mark.slow
def test_compiled_through_the_training_loop(inductor):
    """Compiled forward, backward, Adam and evaluation batches of other sizes, through ``train_stacked``."""
    X = np.random.default_rng(0).normal(size=(22, 1, 8, 8)).astype(np.float32)
    Y = (np.random.default_rng(1).random((22, 3)) < 0.3).astype(np.float32)
    config = TrainConfig(
        task="multilabel", lr=1e-3, batch_size=4, max_steps=2, eval_every=2, sampler="random", allow_empty_labels=True
    )
    seeds = np.arange(6).reshape(2, 3)
    runs = [
        train_stacked(
            stack(2, small_net, compiled=c),
            X,
            Y,
            np.arange(16).reshape(2, 8),
            np.tile(np.arange(16, 22), (2, 1)),
            config,
            seeds,
            device=torch.device("cpu"),
            progress=False,
        )
        for c in (False, True)
    ]
    num = [r.history.select_dtypes("number").to_numpy() for r in runs]
    assert num[0].size
    np.testing.assert_allclose(num[1], num[0], atol=1e-4, rtol=1e-4)


# ----------------------------------------------------------------------------- CUDA only
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_channels_last_bf16_stack_equals_its_teachers_alone():
    X, rows = clips(), torch.arange(12).reshape(3, 4)
    z, _, _ = forward(
        stack(3, memory_format="channels_last", autocast_dtype="bfloat16", device="cuda"), X, rows, training=False
    )
    z0, _, _ = forward(stack(3, device="cuda"), X, rows, training=False)
    torch.testing.assert_close(z, z0, atol=0.1, rtol=0.0)
    mods = []
    for s in np.arange(9).reshape(3, 3)[:, 0]:
        torch.manual_seed(int(s))
        mods.append(resnet())
    for i, mod in enumerate(mods):
        alone = StackedModule(
            [mod], np.array([[i, 0, 0]]), device="cuda", memory_format="channels_last", autocast_dtype="bfloat16"
        )
        zi, _, _ = forward(alone, X, rows[i : i + 1], training=False)
        torch.testing.assert_close(z[i], zi[0], atol=0.1, rtol=0.0)
