"""Sentinel (``--sentinel``): the spec and config, the replies and events Sentinel sends
(as a real Redis 7.0 Sentinel sent them on the lab), the roles event's words, a Sentinel
that cannot be read as a source error on the pair, the screen's line and the perfdata.
tests/live/test_sentinel_live.py does it on a real Sentinel."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from replmon.checks import roles, source_health
from rich.text import Text
from test_roles import AS_GIVEN, SWITCHED, A, B, ticks

from replmon.cli import config_from_args
from replmon.cli_args import DEFAULTS
from replmon.config import parse_sentinel_spec
from replmon.errors import ConfigError, ParseError
from replmon.model.findings import Severity
from replmon.model.sentinel import SentinelSample, SentinelSwitch
from replmon.model.tick import Tick
from replmon.output.perfdata import sentinel_perf
from replmon.passwords import scrub_argv
from replmon.resolve import resolve
from replmon.settings import build_fleet
from replmon.sources import sentinel_parse as sp
from replmon.testing.synth import T0, run_check, status
from replmon.tui import fitting, render

pytestmark = pytest.mark.usefixtures("utc")

MASTER = {  # SENTINEL MASTER lab, Redis 7.0, mid-failover (decoded, RESP2 pairs)
    "name": "lab", "ip": "127.0.0.1", "port": "48951", "runid": "9969b02e", "flags":
    "s_down,o_down,master,failover_in_progress", "config-epoch": "0", "num-slaves": "1",
    "num-other-sentinels": "0", "quorum": "1", "failover-timeout": "5000",
    "failover-state": "wait_promotion"}
NODES = {"127.0.0.1:48951": A, "127.0.0.1:58669": B}


def test_spec_and_config() -> None:
    assert parse_sentinel_spec("10.0.0.5") == {"host": "10.0.0.5"}
    assert parse_sentinel_spec("10.0.0.5:26380/shop") == {
        "host": "10.0.0.5", "port": 26380, "master_name": "shop"}
    assert parse_sentinel_spec("off") == {"enabled": False}
    for bad in ("10.0.0.5:port", "http://x:1", "x:1/a/b", ":26379"):
        with pytest.raises(ConfigError, match="--sentinel"):
            parse_sentinel_spec(bad)
    args = argparse.Namespace(**{**DEFAULTS, "primary": "db163", "replica": "db162",
                                 "sentinel": "redis://:s3cret@10.0.0.5/shop"})
    pair = resolve(config_from_args(args))
    assert pair.sentinel is not None and pair.sentinel.master_name == "shop"
    assert pair.sentinel.port == 26379 and "s3cret" not in repr(pair) + pair.model_dump_json()
    # the password is hidden from ps like an endpoint's
    assert scrub_argv(["--sentinel", "redis://:s3cret@10.0.0.5/shop"]) == (
        ["--sentinel", "redis://:***@10.0.0.5/shop"], ["--sentinel"])


def test_fleet_sentinel_on_the_file_under_the_pairs_own_keys() -> None:
    fleet = build_fleet({"sentinel": {"host": "10.0.0.5"}, "pair": [
        {"name": "shop", "primary": "a", "replica": "b"},
        {"name": "billing", "primary": "c", "replica": "d",
         "sentinel": {"master_name": "billing"}}]})
    cfgs = [p.config.sentinel for p in fleet.pairs]
    assert [(c.host, c.master_name) for c in cfgs if c] == [("10.0.0.5", None),
                                                            ("10.0.0.5", "billing")]
    with pytest.raises(ConfigError, match="sentinel: must be a table"):
        build_fleet({"sentinel": "10.0.0.5", "pair": [{"name": "x", "primary": "a",
                                                       "replica": "b"}]})


def test_master_reply_and_events() -> None:
    pairs: list[Any] = [x for kv in MASTER.items() for x in kv]
    s = sp.build_sample(sp.fields(pairs), NODES)
    assert (s.master_node, s.down, s.failover_state, s.quorum, s.other_sentinels) == (
        A, "o_down", "wait_promotion", 1, 0)
    with pytest.raises(ParseError):
        sp.build_sample(sp.fields(["name", "lab"]), NODES)
    with pytest.raises(ParseError):
        sp.fields("ERR")
    ev = sp.event("+switch-master", "lab 127.0.0.1 48951 127.0.0.1 58669", "lab", T0)
    assert ev is not None and sp.switch_of(ev) == ("127.0.0.1:48951", "127.0.0.1:58669")
    kept = [sp.event(c, t, "lab", T0) for c, t in (
        ("+odown", "master lab 127.0.0.1 48951 #quorum 1/1"),
        ("+selected-slave", "slave 127.0.0.1:58669 127.0.0.1 58669 @ lab 127.0.0.1 48951"),
        ("+sdown", "master other 127.0.0.1 7000"),  # another master's
        ("+slave", "slave 127.0.0.1:58669 127.0.0.1 58669 @ lab 127.0.0.1 48951"))]
    assert [e.kind if e else None for e in kept] == ["+odown", "+selected-slave", None, None]


AFTER = {  # SENTINEL MASTER lab, Redis 7.0, 18 s after it promoted the replica (lab)
    "name": "lab", "ip": "127.0.0.1", "port": "43221",
    "runid": "62d64bf332230b7e183916d15bc2d735319325ad", "flags": "master",
    "link-pending-commands": "0", "link-refcount": "1", "last-ping-sent": "0",
    "last-ok-ping-reply": "814", "last-ping-reply": "814", "down-after-milliseconds": "1000",
    "info-refresh": "630", "role-reported": "master", "role-reported-time": "17433",
    "config-epoch": "1", "num-slaves": "1", "num-other-sentinels": "0", "quorum": "1",
    "failover-timeout": "5000", "parallel-syncs": "1"}


def test_how_long_sentinel_has_seen_the_master_and_its_failover_timeout() -> None:
    """role-reported-time (ms since the master reported its role as it is: ~the time
    since the promotion, measured 17.4 s against the lab's 18.3 s) and failover-timeout,
    as seconds; the master known by the role its node was given."""
    s = sp.build_sample(AFTER, {"127.0.0.1:43221": B}, {"127.0.0.1:43221": "replica"})
    assert (s.role_reported_s, s.failover_timeout_s, s.master_node, s.master_given) == (
        17.433, 5.0, B, "replica")
    assert sp.build_sample(MASTER, NODES).master_given == ""  # no identities given
    bad = dict(AFTER, **{"role-reported-time": "-1", "failover-timeout": "soon"})
    assert sp.build_sample(bad, {}).role_reported_s is None
    assert sp.build_sample(bad, {}).failover_timeout_s is None


def with_sentinel(ts: list[Tick], sample: SentinelSample) -> list[Tick]:
    return [t.model_copy(update={"sentinel": sample}) for t in ts]


def test_the_roles_event_names_what_sentinel_did() -> None:
    sw = SentinelSwitch(wall=T0 + 5.4, old="127.0.0.1:48951", new="127.0.0.1:58669",
                        old_node=A, new_node=B, epoch=3)
    ok = SentinelSample(status=status("ok"), master="127.0.0.1:58669", master_node=B,
                        flags=("master",), config_epoch=3, last_switch=sw)
    (f,), _ = run_check(roles.CHECK, with_sentinel(ticks([AS_GIVEN] * 5 + [SWITCHED] * 5), ok))
    assert f.title.endswith(f"{A} replicates from it; Sentinel promoted {B} at 22:13:25, "
                            "epoch 3"), f.title
    # Sentinel away: the title keeps what it did (the source keeps its last switch)
    down = SentinelSample(status=status("unreachable", "127.0.0.1:26379: refused"),
                          last_switch=sw)
    (f,), _ = run_check(roles.CHECK, with_sentinel(ticks([AS_GIVEN] * 5 + [SWITCHED] * 5),
                                                   down))
    assert "Sentinel promoted" in f.title


def test_sentinel_unreadable_is_a_source_error_on_the_pair() -> None:
    down = SentinelSample(status=status("unreachable", "127.0.0.1:26379: Connection refused",
                                        since=T0))
    found, _ = run_check(source_health.CHECK, with_sentinel(ticks([AS_GIVEN] * 4), down))
    assert [(f.node, f.key, f.severity) for f in found] == [("pair", "sentinel",
                                                             Severity.WARNING)]
    assert found[0].title == "Sentinel unreachable: 127.0.0.1:26379: Connection refused"
    assert [str(p) for p in sentinel_perf(ticks([AS_GIVEN])[0].model_copy(
        update={"sentinel": down}))] == ["sentinel_ok=0;;;0;1", "sentinel_config_epoch=U;;;0",
                                         "sentinel_other_sentinels=U;;;0"]


def test_the_screen_line_fits_a_column_at_80() -> None:
    s = sp.build_sample(MASTER, NODES)
    width = 36  # a column's content at 80x24
    lines = fitting.fit(Text("redis ") + render.sentinel_text(s, A, T0), width).plain
    assert lines.split()[1:] == ["sentinel", "master", "ep", "0", "q", "1/1", "O_DOWN",
                                 "failover", "wait_promotion"], lines
    assert lines.split("\n")[1].split()[:6] == ["sentinel", "master", "ep", "0", "q", "1/1"]
    assert all(len(x) <= width for x in lines.split("\n")), lines
    assert "replica" in render.sentinel_text(s, B, T0).plain
    down = SentinelSample(status=status("timeout", "no answer", since=T0 - 3))
    assert render.sentinel_text(down, A, T0).plain.split() == ["sentinel", "TIMEOUT", "for",
                                                               "3", "s"]
