"""How replmon writes sizes, rates and a tick's time (replmon.units): one rule for every
view. Bytes IEC (1024), one decimal under 10, none from 10, ".0" dropped; a tick's time
its wall time in the local zone, truncated to the second."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from replmon.units import (
    fmt_byte_rate,
    fmt_bytes,
    fmt_bytes_cell,
    fmt_bytes_exact,
    fmt_link_speed,
    fmt_number,
    fmt_setting,
    parse_size_text,
    tick_clock,
    tick_stamp,
)

MIB, GIB = 1 << 20, 1 << 30


@pytest.mark.parametrize(("value", "spaced", "compact"), [
    (0, "0 B", "0B"),
    (1, "1 B", "1B"),
    (1023, "1023 B", "1023B"),
    (1024, "1 KiB", "1KiB"),
    (1536, "1.5 KiB", "1.5KiB"),
    (10239, "10 KiB", "10KiB"),          # 9.999 KiB: one decimal would say 10.0
    (1_048_575, "1 MiB", "1MiB"),        # 1023.999 KiB rounds to 1024 KiB: the next unit
    (1_048_576, "1 MiB", "1MiB"),
    (1_677_722, "1.6 MiB", "1.6MiB"),
    (648_000, "633 KiB", "633KiB"),
    (64 * MIB, "64 MiB", "64MiB"),
    (16 * GIB, "16 GiB", "16GiB"),
    (3 * 2**40 // 2, "1.5 TiB", "1.5TiB"),
    (-1536, "-1.5 KiB", "-1.5KiB"),
    (-0.3, "0 B", "0B"),                 # no "-0"
    (None, "?", "-"),                    # unknown: "?" in a title, "-" on the screen
])
def test_bytes(value: float | None, spaced: str, compact: str) -> None:
    assert fmt_bytes(value) == spaced
    assert fmt_bytes(value, compact=True) == compact


def test_rates_are_the_same_rule_per_second() -> None:
    assert fmt_byte_rate(648_000) == "633 KiB/s"
    assert fmt_byte_rate(648_000, compact=True) == "633KiB/s"
    assert fmt_byte_rate(12.6e6) == "12 MiB/s"  # dd's "12.6 MB/s"
    assert fmt_byte_rate(0) == "0 B/s" and fmt_byte_rate(None) == "?"


def test_what_the_parser_reads_the_formatter_writes_back() -> None:
    for text in ("1K", "64M", "1G", "512K", "3T"):
        n = parse_size_text(text)
        assert parse_size_text(fmt_bytes(n, compact=True).removesuffix("iB")) == n


@pytest.mark.parametrize(("value", "text"), [
    (67_108_864, "64 MiB"),                     # exact: nothing to add
    (1_048_576, "1 MiB"),
    (2_445_828, "2.3 MiB (2,445,828 B)"),       # rounded: the exact count after it
    (1_048_575, "1 MiB (1,048,575 B)"),
    (1023, "1023 B"),
    (0, "0 B"),
    (None, "?"),
])
def test_exact_where_the_short_form_rounds(value: int | None, text: str) -> None:
    assert fmt_bytes_exact(value) == text


@pytest.mark.parametrize(("value", "width", "text"), [
    (None, 5, "    -"), (0, 5, "    0"), (950, 5, "  950"), (1023, 5, " 1023"),
    (1024, 5, "   1K"), (648_000, 5, " 633K"), (1_677_722, 5, " 1.6M"),
    (64 * MIB, 5, "  64M"), (1023 * 1024, 5, "1023K"), (1023 * 1024, 4, "  1M"),
    (-1536, 4, " -2K"), (-1536, 5, "-1.5K"),
])
def test_text_row_cells_keep_their_width(value: float | None, width: int, text: str) -> None:
    assert fmt_bytes_cell(value, width) == text


def test_link_speeds_are_bits_as_nics_are_rated() -> None:
    assert fmt_link_speed(100) == "100 Mbit/s"
    assert fmt_link_speed(1000) == "1 Gbit/s"
    assert fmt_link_speed(2500, compact=True) == "2.5Gbit/s"
    assert fmt_link_speed(None) == "?"


def test_settings_in_bytes_by_their_name() -> None:
    assert fmt_setting("innodb_buffer_pool_size", "67108864") == "64 MiB"
    assert fmt_setting("repl-backlog-size", 1_048_576) == "1 MiB"
    assert fmt_setting("maxmemory", 8_005_061) == "7.6 MiB (8,005,061 B)"
    assert fmt_setting("maxmemory", 0) == "0 (no limit)"
    assert fmt_setting("client-output-buffer-limit replica",
                       (268_435_456, 67_108_864, 60)) == "256 MiB 64 MiB 60 s"
    assert fmt_setting("max_allowed_packet", "x") == "x"  # unreadable: as it is
    assert fmt_setting("server_id", "12345") == "12345"   # not a size


def test_a_findings_numbers_by_the_unit_in_their_name() -> None:
    assert fmt_number("relay_log_space_bytes", 2_445_828) == "2.3 MiB (2,445,828 B)"
    assert fmt_number("offset_rate_bytes_s", 648_000.0) == "633 KiB/s"
    assert fmt_number("growth_bytes_per_s", 648_000.0) == "633 KiB/s"
    assert fmt_number("bytes_behind", 1_304_986) == "1.2 MiB (1,304,986 B)"
    assert fmt_number("out_of_sync_kib", 65_536) == "64 MiB"
    assert fmt_number("out_of_sync_growth_kib_s", 7268.0) == "7.1 MiB/s"
    # positions and offsets are addresses, counts are counts: as the server prints them
    assert fmt_number("primary_pos", 2_064_716) == "2064716"
    assert fmt_number("transactions_behind", 4500) == "4500"
    assert fmt_number("lag_at_least", True) == "yes"  # a flag in words, not Python
    # a replication thread as the server says it, like io_running ("Yes"/"Connecting")
    assert fmt_number("sql_running", False) == "No"
    assert fmt_number("replica_sql_running", True) == "Yes"
    assert fmt_number("used_memory_bytes", None) == "unknown"


@pytest.fixture
def india(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """UTC+05:30, a POSIX zone string (no tz database needed): a view in UTC where the
    others are local would be 5.5 hours off."""
    monkeypatch.setenv("TZ", "XST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_ticks_time_is_truncated_not_rounded(india: None) -> None:
    wall = 1_795_450_184.7522545  # seed 004's tick 0: 16:09:44.75 UTC
    assert tick_clock(wall) == "21:39:44"
    assert tick_stamp(wall) == "2026-11-23 21:39:44 XST"
    assert tick_clock(wall, time.gmtime) == "16:09:44"
    assert tick_clock(1_795_450_184.999999) == "21:39:44"  # never 45
    assert tick_stamp(None) == "-"
