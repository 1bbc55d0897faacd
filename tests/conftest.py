"""Test-wide settings.

The unit tests check exact CPU float32 results (same seeds -> same votes, one path equal to another). On a
GPU machine ``device=None`` would pick CUDA with bf16 autocast, and those checks would fail by rounding (seen
on an H100). So the suite runs on the CPU unless ``PATE_STUDY_DEVICE`` is set; the CUDA behaviour has its own
tests (tests/learning/test_cuda.py, skipped without a GPU).
"""
import os

os.environ.setdefault("PATE_STUDY_DEVICE", "cpu")
