"""The privacy package and its command line load scipy only when a computation needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHECK = """
import sys
import pate_study.privacy
import pate_study.privacy.__main__  # what `python -m pate_study.privacy epsilon --help` imports
loaded = sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy."))
assert not loaded, loaded
from pate_study.privacy import gnmax_epsilon  # lazy attribute of the package
spent = gnmax_epsilon(sigma=40.0, delta=1e-5, n_queries=100)  # data-independent: no scipy needed
assert not any(m.startswith("scipy") for m in sys.modules), "data-independent GNMax imported scipy"
print(spent.epsilon)
"""


def test_help_and_simple_cases_do_not_import_scipy():
    done = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) > 0


def test_lazy_attributes_resolve_to_the_submodules():
    import pate_study.privacy as privacy
    from pate_study.privacy import multilabel, multiwinner, rdp

    assert privacy.gnmax_epsilon is rdp.gnmax_epsilon
    assert privacy.gnthreshold_epsilon is multilabel.gnthreshold_epsilon
    assert privacy.tau_pate_epsilon is multiwinner.tau_pate_epsilon
    assert set(privacy.__all__) <= set(dir(privacy))
    for name in privacy.__all__:
        assert getattr(privacy, name) is not None
