"""A corpus of corrupted vote files and out-of-range thresholds, through the CLI and the API.

Every vote file is refused with exit status 2 and one line on stderr that names the flag and the
file, says what is wrong and how to fix it, and never suggests ``allow_pickle``. Each class of the
corpus (not an .npy file, a malformed or lying .npy header, wrong values, wrong orientation) is
checked at the boundary every vote input crosses: :func:`load_votes_file` for files,
:func:`check_counts` for arrays (called by every accountant and aggregator).
"""

from __future__ import annotations

import io
import pickle
import time
import warnings
import zipfile

import numpy as np
import numpy.lib.format as npy_format
import pytest

from pate_study.core.npyfile import NpyFileError, load_npy, read_npy_header
from pate_study.privacy import aggregators, moments, rdp
from pate_study.privacy.__main__ import main
from pate_study.privacy._validation import ThresholdRangeWarning, check_counts, load_votes_file


def _votes(n=40, classes=10, teachers=250, seed=0):
    rng = np.random.default_rng(seed)
    return rng.multinomial(teachers, np.full(classes, 1 / classes), size=n).astype(np.int64)


def _npy_bytes(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def _header_only(shape, descr="<i8", data=b"") -> bytes:
    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def _npz_bytes() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, votes=_votes(3))
    return buf.getvalue()


def _zero_rows():
    return np.zeros((3, 4), dtype=np.int64)


def _unequal():
    v = _votes(5)
    v[2, 0] += 7
    return v


def _transposed():
    return np.ascontiguousarray(_votes(9000, 10).T)  # 10 x 9000: a transposed export


def _shifted_class():
    v = _votes(6).astype(np.float64)
    v[1, 1] += 0.5
    v[1, 2] -= 0.5
    return v


def _with_nan():
    v = _votes(4).astype(np.float64)
    v[0, 0] = np.nan
    return v


def _negative():
    v = _votes(4)
    v[0, 0] -= 300
    v[0, 1] += 300
    return v


# name -> (file bytes, substring the one-line message must contain)
CORPUS = {
    "csv text": (b"120,130\n200,50\n", "text file"),
    "npz archive": (_npz_bytes(), ".npz archive"),
    "empty file": (b"", "empty"),
    "raw pickle": (pickle.dumps([[1, 2], [3, 0]]), "pickle"),
    "object array (pickle inside .npy)": (_npy_bytes(np.array([[1, None]], dtype=object)), "Python objects"),
    "truncated .npy": (_npy_bytes(_votes(20))[:-37], "truncated"),
    "header only, no data": (_header_only((20, 10)), "truncated"),
    "header claims a huge shape": (_header_only((10**7, 10**7), data=b"\0" * 64), "truncated"),
    "header claims a huge header": (b"\x93NUMPY\x02\x00" + (2**31).to_bytes(4, "little") + b"{", "header"),
    "longer than the header says": (_npy_bytes(_votes(3)) + b"\0" * 16, "longer than its header says"),
    "cut inside the magic": (b"\x93NUMPY\x01", "truncated .npy header"),
    "garbage header dict": (b"\x93NUMPY\x01\x00\x10\x00{'descr': <i8}  \n", "unreadable .npy header"),
    "structured dtype": (_npy_bytes(np.zeros(3, dtype=[("a", "<i8"), ("b", "<f8")])), "structured dtype"),
    "strings": (_npy_bytes(np.array([["1", "2"]])), "expected numbers"),
    "complex": (_npy_bytes(np.ones((2, 2), dtype=complex)), "expected numbers"),
    "3-D array": (_npy_bytes(np.ones((2, 2, 2), dtype=np.int64)), "2-D"),
    "empty array": (_npy_bytes(np.zeros((0, 10), dtype=np.int64)), "non-empty"),
    "negative counts": (_npy_bytes(_negative()), "non-negative"),
    "fractional counts": (_npy_bytes(_shifted_class()), "integer"),
    "NaN": (_npy_bytes(_with_nan()), "finite"),
    "unequal row totals": (_npy_bytes(_unequal()), "row 2 to 257"),
    "no votes at all": (_npy_bytes(_zero_rows()), "every row sums to 0"),
    "transposed 10 x 9000": (_npy_bytes(_transposed()), "looks transposed"),
}


def _cli(capsys, *args):
    code = main(["epsilon", "--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_cli_refuses_corrupted_vote_file(case, tmp_path, capsys):
    data, expected = CORPUS[case]
    path = tmp_path / "votes.npy"
    path.write_bytes(data)
    start = time.perf_counter()
    code, out, err = _cli(capsys, "--votes", str(path))
    assert time.perf_counter() - start < 20  # nothing huge is allocated or scanned
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: --votes ")  # one line naming the flag
    assert str(path) in err and expected in err
    assert "allow_pickle" not in err and "unsafe" not in err.lower()


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_api_reader_raises_value_error_naming_the_file(case, tmp_path):
    data, expected = CORPUS[case]
    path = tmp_path / "v.npy"
    path.write_bytes(data)
    with pytest.raises(ValueError) as info:
        load_votes_file(path, flag="votes_file")
    message = str(info.value)
    assert "\n" not in message and str(path) in message and "votes_file" in message and expected in message


def test_huge_header_is_refused_before_allocating(tmp_path):
    path = tmp_path / "huge.npy"
    path.write_bytes(_header_only((2**40, 2**20), data=b"\0" * 80))
    with pytest.raises(NpyFileError, match=r"declares shape \(1099511627776, 1048576\)"):
        read_npy_header(path)


def test_transposed_message_gives_the_fix(tmp_path, capsys):
    path = tmp_path / "t.npy"
    np.save(path, _transposed())
    code, _, err = _cli(capsys, "--votes", str(path))
    assert code == 2 and "10 rows x 9000 columns" in err and "every column sums to 250" in err
    assert "numpy.save(path, votes.T)" in err
    # the same file oriented correctly is accepted
    np.save(path, _transposed().T)
    code, out, err = _cli(capsys, "--votes", str(path), "--first", "100")
    assert code == 0 and err == "" and '"n_queries": 100' in out


def test_n_teachers_flag(tmp_path, capsys):
    path = tmp_path / "v.npy"
    np.save(path, _votes(5, teachers=250))
    code, _, err = _cli(capsys, "--votes", str(path), "--n-teachers", "200")
    assert code == 2 and "number of teachers, 200" in err and str(path) in err
    code, out, _ = _cli(capsys, "--votes", str(path), "--n-teachers", "250")
    assert code == 0 and "epsilon" in out


def test_valid_file_with_float_integral_counts_is_accepted(tmp_path, capsys):
    path = tmp_path / "v.npy"
    np.save(path, _votes(5).astype(np.float32))
    code, out, err = _cli(capsys, "--votes", str(path))
    assert code == 0 and err == ""
    assert load_npy(path).dtype == np.float32


@pytest.mark.filterwarnings("ignore::pate_study.privacy.accounting.OrderAtGridEdgeWarning")
@pytest.mark.parametrize(
    "call",
    [
        lambda v: rdp.gnmax_epsilon(sigma=40, delta=1e-5, votes=v),
        lambda v: rdp.confident_gnmax_epsilon(threshold=200, sigma1=150, sigma2=40, delta=1e-5, votes=v, rng=0),
        lambda v: rdp.lnmax_rdp_epsilon(gamma=0.05, delta=1e-5, votes=v),
        lambda v: moments.moments_epsilon(gamma=0.05, delta=1e-5, votes=v),
        lambda v: aggregators.gnmax(v, 40, 0),
        lambda v: aggregators.lnmax(v, 0.05, 0),
        lambda v: aggregators.confident_gnmax(v, 200, 150, 40, 0),
    ],
    ids=[
        "gnmax_epsilon",
        "confident_gnmax_epsilon",
        "lnmax_rdp_epsilon",
        "moments_epsilon",
        "gnmax",
        "lnmax",
        "confident_gnmax",
    ],
)
def test_every_api_entry_point_checks_row_totals_and_orientation(call):
    with pytest.raises(ValueError, match="row 0 sums to 250, row 2 to 257"):
        call(_unequal())
    with pytest.raises(ValueError, match="looks transposed"):
        call(_transposed())
    call(_votes(5))  # a valid matrix passes


def test_check_counts_with_known_number_of_teachers():
    with pytest.raises(ValueError, match="number of teachers, 100"):
        check_counts(_votes(3), n_teachers=100)
    assert check_counts(_votes(3), n_teachers=250).shape == (3, 10)
    with pytest.raises(ValueError, match="looks transposed"):
        check_counts(_votes(30, 3).T, n_teachers=250)


# ------------------------------------------------------------------ thresholds
@pytest.mark.parametrize("threshold, warns", [(-5, True), (0, False), (200, False), (250, False), (300, True)])
def test_cli_threshold_outside_vote_range_warns(tmp_path, capsys, threshold, warns):
    path = tmp_path / "v.npy"
    np.save(path, _votes(20))
    code = main(
        [
            "epsilon",
            "--aggregator",
            "confident-gnmax",
            "--threshold",
            str(threshold),
            "--sigma1",
            "150",
            "--sigma2",
            "40",
            "--delta",
            "1e-5",
            "--votes",
            str(path),
        ]
    )
    err = capsys.readouterr().err
    assert code == 0
    if warns:
        assert err.count("\n") == 1 and err.startswith("warning: --threshold=") and "[0, 250]" in err
    else:
        assert err == ""


def test_cli_negative_threshold_warns_without_votes(capsys):
    code = main(
        [
            "epsilon",
            "--aggregator",
            "confident-gnmax",
            "--threshold",
            "-1",
            "--sigma1",
            "150",
            "--sigma2",
            "40",
            "--delta",
            "1e-5",
            "--n-queries",
            "10",
        ]
    )
    assert code == 0 and "warning: --threshold=-1 lies below" in capsys.readouterr().err


_FRACTIONS = np.array([[0.9, 0.1, 0.5], [0.2, 0.7, 0.3]])
_PROBS = np.tile(np.full(10, 0.1), (5, 1))

# aggregator -> (call with a threshold value, a value inside its range, values outside)
THRESHOLDED = {
    "confident_gnmax": (lambda t: aggregators.confident_gnmax(_votes(5), t, 150, 40, 0), 200, (-1, 251)),
    "interactive_gnmax": (
        lambda t: aggregators.interactive_gnmax(_votes(5), _PROBS, t, 150, 40, 0.5, 0),
        100,
        (-10, 400),
    ),
    "interactive_gnmax student": (
        lambda t: aggregators.interactive_gnmax(_votes(5), _PROBS, 100, 150, 40, t, 0),
        0.5,
        (0.0, 1.5),
    ),
    "gnthreshold": (lambda t: aggregators.gnthreshold(_FRACTIONS, t, 0.1, 0), 0.5, (-0.1, 1.2)),
    "confident_gnthreshold": (
        lambda t: aggregators.confident_gnthreshold(_FRACTIONS, t, 0.1, 0.1, 0.1, 0),
        0.5,
        (-3, 2),
    ),
    "confident_gnthreshold confidence (printed)": (
        lambda t: aggregators.confident_gnthreshold(_FRACTIONS, 0.5, 0.1, t, 0.1, 0, rule="printed"),
        0.1,
        (-0.6, 0.7),
    ),
    "confident_gnthreshold confidence (max)": (
        lambda t: aggregators.confident_gnthreshold(_FRACTIONS, 0.5, 0.1, t, 0.1, 0, rule="max"),
        0.8,
        (-0.1, 1.1),
    ),
}


@pytest.mark.parametrize("name", sorted(THRESHOLDED))
def test_thresholded_aggregators_share_one_rule(name):
    call, inside, outside = THRESHOLDED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ThresholdRangeWarning)
        call(inside)
    for value in outside:
        with pytest.warns(ThresholdRangeWarning, match="lies (below|above) the range"):
            call(value)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="threshold"):
            call(bad)


# ------------------------------------------------------------------ one-line parser errors
@pytest.mark.parametrize(
    "argv",
    [
        ["epsilon", "--aggregator", "bogus", "--delta", "1e-5", "--n-queries", "3"],
        ["epsilon", "--aggregator", "gnmax", "--sigma", "x", "--delta", "1e-5", "--n-queries", "3"],
        ["epsilon", "--aggregator", "gnmax", "--sigma", "1", "--delta", "1e-5"],
        [
            "epsilon",
            "--aggregator",
            "gnmax",
            "--sigma",
            "1",
            "--delta",
            "1e-5",
            "--n-queries",
            "3",
            "--n-teachers",
            "0",
        ],
    ],
)
def test_parser_errors_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "error:" in err and "--help" in err


def test_zip_named_npy_is_not_unpacked(tmp_path):
    path = tmp_path / "votes.npy"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("votes.npy", _npy_bytes(_votes(3)))
    with pytest.raises(NpyFileError, match="numpy.load\\(path\\)\\['votes'\\]"):
        load_npy(path)
