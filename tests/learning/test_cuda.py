"""CUDA-only checks (skipped without a GPU): what a GPU run showed could break (H100, 2026-11-22).

Run on a GPU machine with ``python -m pytest tests/learning/test_cuda.py``; they pick CUDA explicitly, so the
suite's ``PATE_STUDY_DEVICE=cpu`` does not affect them.
"""

import numpy as np
import pytest
import torch

from pate_study.core.device import choose_device

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_stacked_resnet_teachers_train_under_bf16_autocast():
    """Every stacked ResNet teacher failed here before BatchNorm was kept in float32 (stacked.py)."""
    from pate_study.experiments.audioset import data as as_data
    from pate_study.experiments.audioset import teachers
    from pate_study.learning.partitions import make_partitions

    X, Y = as_data.synthetic_log_mel_clips(48, 3, frames=32, seed=0)
    parts = make_partitions(40, 4, 10, seed=0)
    spec = teachers.TeacherSpec(batch_size=4, steps=3, eval_every=3)
    history, _, _ = teachers.train_logmel_teachers(
        "resnet18",
        X[:40],
        Y[:40],
        parts,
        np.arange(0, 4),
        X[40:],
        Y[40:],
        spec,
        width_scale=16,
        head=(8,),
        seed=0,
        device="cuda",
    )
    assert len(history) and np.isfinite(history["value"].to_numpy(dtype=float)).all()
    assert sorted(history["teacher"].unique()) == [0, 1, 2, 3]


def test_chunked_teachers_match_one_call_on_cuda():
    """Teachers in vmap chunks (the 2^31-element guard) give what one call gives, on the GPU too."""
    from torch import nn

    from pate_study.learning.stacked import StackedModule

    def net():
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(144, 3))

    rows = torch.as_tensor(np.random.default_rng(1).integers(0, 8, size=(4, 5)))
    X = np.random.default_rng(2).random((8, 1, 8, 8), dtype=np.float32)
    outs = []
    for limit in (2**31 - 1, 2 * 5 * 4 * 6 * 6):
        m = StackedModule.from_factory(net, np.arange(12).reshape(4, 3), device="cuda")
        m.max_kernel_elements = limit
        outs.append(m.forward(m.params(), m.buffers(), m.source(X), rows, training=False).float().cpu())
    torch.testing.assert_close(outs[1], outs[0], rtol=1e-4, atol=1e-5)


def test_device_none_picks_cuda_unless_the_variable_says_cpu(monkeypatch):
    monkeypatch.delenv("PATE_STUDY_DEVICE", raising=False)
    assert choose_device(None).type == "cuda"
    monkeypatch.setenv("PATE_STUDY_DEVICE", "cpu")
    assert choose_device(None).type == "cpu"
