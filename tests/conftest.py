"""Test-wide settings.

The unit tests check exact CPU float32 results (same seeds -> same votes, one path equal to another). On a
GPU machine ``device=None`` would pick CUDA with bf16 autocast, and those checks would fail by rounding (seen
on an H100). So the suite runs on the CPU unless ``PATE_STUDY_DEVICE`` is set; the CUDA behaviour has its own
tests (tests/learning/test_cuda.py, skipped without a GPU).
"""

import os

os.environ.setdefault("PATE_STUDY_DEVICE", "cpu")


import contextlib  # noqa: E402 - after PATE_STUDY_DEVICE is set, before the package reads it
import signal  # noqa: E402 - after PATE_STUDY_DEVICE is set, before the package reads it

import pytest  # noqa: E402 - after PATE_STUDY_DEVICE is set, before the package reads it


@pytest.fixture
def file_size_limit():
    """A file system that refuses bytes, for real: ``with file_size_limit(n):`` caps every file this process
    writes at ``n`` bytes (``RLIMIT_FSIZE`` with ``SIGXFSZ`` ignored), so a write past it fails with ``EFBIG`` in
    whatever library writes (numpy, torch's zip writer, pandas, shutil), as a full disk fails midway with
    ``ENOSPC``. No writer is mocked. POSIX only; the limit is restored after the block."""
    resource = pytest.importorskip("resource")

    @contextlib.contextmanager
    def limit(nbytes: int):
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            signal.signal(signal.SIGXFSZ, previous)

    return limit


@pytest.fixture
def two_torch_threads():
    """torch runs at least two threads for the test, restored after it: channels-last training on the CPU is refused
    with one thread (:func:`pate_study.learning.stacked.check_channels_last_threads`), as ``OMP_NUM_THREADS=1`` or a
    one-core machine would give."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(max(2, before))
    yield
    torch.set_num_threads(before)
