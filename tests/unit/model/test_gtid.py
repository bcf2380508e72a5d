"""GTID arithmetic on the text servers print: MariaDB 10.11 positions captured from the
lab (``SELECT @@gtid_binlog_pos, @@gtid_binlog_state``), MySQL sets as the MySQL 8.0/8.4
manuals print them (Replication with GTIDs: GTID sets, gtid_executed; 8.3+ tags)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replmon.model import gtid

# MySQL 8.0 manual, "GTID Format and Storage" / gtid_executed examples
DOC_SET = ("8e349184-bc14-11e3-8d4c-0800272864ba:1-30,\n"
           "8e3648e4-bc14-11e3-8d4c-0800272864ba:1-7")
UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
# MySQL 8.4 manual: a tagged GTID set (same uuid, untagged and tagged intervals)
TAGGED = f"{UUID_A}:1-5:domain_1:1-3"


def test_mysql_set_parses_merges_and_counts() -> None:
    s = gtid.parse_gtid_set(DOC_SET)
    assert gtid.count(s) == 37
    assert gtid.first(s) == "8e349184-bc14-11e3-8d4c-0800272864ba:1"
    merged = gtid.parse_gtid_set(f"{UUID_A.upper()}:1-5:6-9:20,{UUID_A}:10")
    assert merged == {UUID_A: ((1, 10), (20, 20))}
    assert gtid.parse_gtid_set("") == {}


def test_tagged_sets_keep_tags_apart() -> None:
    s = gtid.parse_gtid_set(TAGGED)
    assert s == {UUID_A: ((1, 5),), f"{UUID_A}:domain_1": ((1, 3),)}
    assert gtid.count(s) == 8


def test_subtract_is_what_the_other_side_lacks() -> None:
    primary = gtid.parse_gtid_set(f"{UUID_A}:1-100")
    replica = gtid.parse_gtid_set(f"{UUID_A}:1-40:45-90")
    assert gtid.subtract(primary, replica) == {UUID_A: ((41, 44), (91, 100))}
    assert gtid.count(gtid.subtract(replica, primary)) == 0
    assert gtid.format_set(gtid.subtract(primary, replica)) == f"{UUID_A}:41-44:91-100"


def test_behind_in_both_dialects() -> None:
    assert gtid.behind(f"{UUID_A}:1-100", f"{UUID_A}:1-97") == 3
    assert gtid.behind(DOC_SET, DOC_SET) == 0
    # MariaDB 10.11 (lab): primary gtid_binlog_pos vs replica Gtid_Slave_Pos, per domain
    assert gtid.behind("0-1-1682", "0-1-1534") == 148
    assert gtid.behind("0-1-1682,1-1-10", "0-1-1682") == 10  # a domain it never saw
    assert gtid.behind("0-1-5281", "0-1-5282") == 0  # read a moment later: ahead, not -1


@pytest.mark.parametrize(("a", "b"), [("", "0-1-5"), ("0-1-5", ""), ("0-1-5", f"{UUID_A}:1"),
                                 ("garbage", "0-1-5"), (f"{UUID_A}:0-3", f"{UUID_A}:1")])
def test_not_comparable_is_none_never_zero(a: str, b: str) -> None:
    assert gtid.behind(a, b) is None


@pytest.mark.parametrize("text", ["xyz:1-5", f"{UUID_A}:5-1", f"{UUID_A}:a-b", "0-1"])
def test_garbage_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="not a"):
        gtid.parse_gtid_set(text) if ":" in text or "-" not in text else gtid.parse_maria(text)


def test_mariadb_binlog_state_by_domain_and_server() -> None:
    # the lab's replica after one INSERT made on it (server_id 2)
    assert gtid.parse_maria("0-1-5281,0-2-5282") == {(0, 1): 5281, (0, 2): 5282}
    assert gtid.maria_domains("0-1-5281,0-2-5282,1-1-7") == {0: 5282, 1: 7}


_PART = st.one_of(st.integers(0, 2**32).map(str), st.sampled_from(
    ["", " 5", "5 ", "+5", "-", "٣", "²", "0x5", "5\n", "1_000", "1,0-1-2"]))
_MARIA_TEXT = st.one_of(
    st.tuples(_PART, _PART, _PART).map("-".join),
    st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3), st.integers(0, 99)),
             max_size=3).map(lambda gs: ",".join(f"{d}-{s}-{n}" for d, s, n in gs)),
    st.text(alphabet="0123-, \n:", max_size=12))


@given(_MARIA_TEXT, _MARIA_TEXT)
@settings(max_examples=800, deadline=None)  # (3,000 took 20 s of the suite's 8 minutes)
def test_one_gtid_shortcuts_agree_with_the_parser(a: str, b: str) -> None:
    """``behind`` and ``_parse_maria`` read a single "d-s-n" without the regex or a cache
    (it is new at every tick under load): the same answer as the general path, or the
    same error, for any text."""
    assert gtid.behind(a, b) == gtid._behind(a, b)
    try:
        want: object = gtid._parse_maria_any(a)
    except ValueError as e:
        want = str(e)
    try:
        got: object = gtid._parse_maria(a)
    except ValueError as e:
        got = str(e)
    assert got == want
