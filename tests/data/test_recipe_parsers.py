"""The recipes' parsers on small hand-made inputs (made tiny on purpose, so they are tested directly rather than
through the completeness rule of a full prepare): the Malicious URLs CSV, the ECML/PKDD 2007 XML and the DeepLog
key sequences. Every refusal is a MalformedDataError naming the file (and the line or sample)."""

from __future__ import annotations

import re
import time
import tracemalloc

import numpy as np
import pytest

from data_recipes import deeplog_hdfs, ecml_pkdd2007, malicious_urls
from data_recipes.framework import MalformedDataError


# ------------------------------------------------------------------------------------------ Malicious URLs
def test_a_well_formed_csv_is_read():
    df = malicious_urls.parse_csv(b"url,type\nexample.com,benign\nbad.example/x?a=1,phishing\n", where="f.csv")
    assert list(df["url"]) == ["example.com", "bad.example/x?a=1"] and list(df["label"]) == [0, 1]


def test_a_header_only_csv_is_refused():
    with pytest.raises(MalformedDataError, match=r"^f\.csv: the header has no rows below it"):
        malicious_urls.parse_csv(b"url,type\n", where="f.csv")


@pytest.mark.parametrize(
    "data", [b"url,type\nexample.com,benign,extra\n", b"url,type\nexample.com,benign\nx.org,phishing,surplus\n"]
)
def test_a_row_with_an_extra_field_is_refused_not_shifted(data):
    """pandas would read a row one field longer than the header with its first field as the index, shifting the
    URL into the type column; the parser refuses it instead."""
    with pytest.raises(MalformedDataError, match=r"^f\.csv: not a readable CSV of 2 fields per row"):
        malicious_urls.parse_csv(data, where="f.csv")


def test_empty_urls_are_dropped_and_counted():
    df = malicious_urls.parse_csv(b'url,type\n,benign\n"  ",phishing\nexample.com,benign\n', where="f.csv")
    assert list(df["url"]) == ["example.com"] and df.attrs["dropped_empty_url"] == 2


def test_a_csv_of_empty_urls_only_is_refused():
    with pytest.raises(MalformedDataError, match="every one of the 2 rows has an empty URL"):
        malicious_urls.parse_csv(b"url,type\n,benign\n,malware\n", where="f.csv")


@pytest.mark.parametrize(
    "data, match",
    [
        (b"", "not a readable CSV"),
        (b"u,t\na,benign\n", "expected the 2 columns"),
        (b"url,type\nexample.com,weird\n", "unknown type"),
    ],
)
def test_other_malformed_csvs_name_the_file(data, match):
    with pytest.raises(MalformedDataError, match=rf"^f\.csv: .*{match}"):
        malicious_urls.parse_csv(data, where="f.csv")


# ------------------------------------------------------------------------------------------ ECML/PKDD 2007
def _sample(sid: int, kind: str = "Valid", uri: str = "/a") -> str:
    return (
        f'<sample id="{sid}"><class><type>{kind}</type></class><request><method>GET</method>'
        f"<uri><![CDATA[{uri}]]></uri><query><![CDATA[x=1]]></query></request></sample>"
    )


XML = f'<?xml version="1.0"?>\n<dataset>{_sample(1)}{_sample(2, "XSS", "/b")}</dataset>\n'.encode()


def test_a_well_formed_xml_is_read():
    df = ecml_pkdd2007.parse_xml(XML, where="f.xml")
    assert list(df["url"]) == ["/a?x=1", "/b?x=1"] and list(df["label"]) == [0, 1]


@pytest.mark.parametrize("cut", [len(XML) - 12, len(XML) // 2, 30])
def test_a_truncated_xml_is_refused(cut):
    with pytest.raises(MalformedDataError, match=r"^f\.xml: not well-formed XML"):
        ecml_pkdd2007.parse_xml(XML[:cut], where="f.xml")


def _bomb(levels: int = 9, fan: int = 10) -> str:
    lines = ['<?xml version="1.0"?>', "<!DOCTYPE dataset [", ' <!ENTITY lol0 "lol">']
    lines += [f' <!ENTITY lol{i} "{f"&lol{i - 1};" * fan}">' for i in range(1, levels + 1)]
    lines += [
        "]>",
        f'<dataset><sample id="1"><class><type>Valid</type></class><request><uri>&lol{levels};</uri>'
        "</request></sample></dataset>",
    ]
    return "\n".join(lines)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_an_entity_expansion_bomb_is_refused_quickly_and_without_memory(encoding):
    """10**9 'lol's (3 GB) if expanded: refused before parsing, in well under a second and a few MB."""
    data = _bomb().encode(encoding)
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(MalformedDataError, match=r"^f\.xml: declares XML entities"):
        ecml_pkdd2007.parse_xml(data, where="f.xml")
    seconds, (_, peak) = time.perf_counter() - start, tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seconds < 5 and peak < 50 * 2**20


def test_expat_itself_stops_a_bomb_that_slipped_past_the_check(monkeypatch):
    """The second guard: with the declaration check switched off, expat's amplification limit still refuses."""
    monkeypatch.setattr(ecml_pkdd2007, "_declares_entities", lambda data: False)
    with pytest.raises(MalformedDataError, match="not well-formed XML"):
        ecml_pkdd2007.parse_xml(_bomb().encode(), where="f.xml")


@pytest.mark.parametrize(
    "body, match",
    [
        (_sample(1, "Nope"), "unknown class 'Nope'"),
        (_sample(1, uri=""), "has no <request><uri>"),
        ("", "no <sample> elements"),
    ],
)
def test_malformed_samples_are_named(body, match):
    with pytest.raises(MalformedDataError, match=match):
        ecml_pkdd2007.parse_xml(f"<dataset>{body}</dataset>".encode(), where="f.xml")


# ------------------------------------------------------------------------------------------ DeepLog keys
def test_keys_are_read_per_line():
    seqs = deeplog_hdfs.parse_sequences("5 22 5\n\n9 11\n", where="hdfs_train")
    assert [s.tolist() for s in seqs] == [[5, 22, 5], [9, 11]]


@pytest.mark.parametrize("token", ["²", "٣", "３", "x", "-1", "1.5", "+3", "1e3"])
def test_a_token_that_is_not_ascii_digits_names_file_line_and_token(token):
    with pytest.raises(MalformedDataError, match=rf"^hdfs_train: line 2: token '{re.escape(token)}' is not a log key"):
        deeplog_hdfs.parse_sequences(f"1 2\n3 {token} 4\n", where="hdfs_train")


@pytest.mark.parametrize("token", ["32768", "9" * 30, "100000"])
def test_a_key_out_of_range_names_file_and_line(token):
    with pytest.raises(MalformedDataError, match=r"^hdfs_train: line 1: log key \d+ is out of range \(0 to 32767\)"):
        deeplog_hdfs.parse_sequences(f"{token} 1\n", where="hdfs_train")


def test_the_largest_key_and_leading_zeros_are_accepted():
    seqs = deeplog_hdfs.parse_sequences("32767 0007\n", where="hdfs_train")
    assert seqs[0].tolist() == [32767, 7] and seqs[0].dtype == np.int64
