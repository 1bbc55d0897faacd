"""Environment variables that name something this machine cannot give are refused naming the variable."""

from __future__ import annotations

import pytest
import torch

from pate_study.core.device import choose_device


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("value", ["cuda", " cuda "])
def test_device_variable_asking_for_cuda_without_cuda_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("PATE_STUDY_DEVICE", value)
    with pytest.raises(ValueError, match=r"^PATE_STUDY_DEVICE=cuda: CUDA was requested but this machine has none"):
        choose_device(None)


@pytest.mark.parametrize("value", ["gpu", "cuda:x", "CPU0"])
def test_device_variable_with_an_unknown_value_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("PATE_STUDY_DEVICE", value)
    with pytest.raises(ValueError, match=r"^PATE_STUDY_DEVICE="):
        choose_device(None)


def test_an_explicit_device_argument_wins_over_the_variable(monkeypatch):
    monkeypatch.setenv("PATE_STUDY_DEVICE", "cuda")
    assert choose_device("cpu").type == "cpu"
