"""Recording the real lab: what the collector and the engine produced live comes
back identical from the file, the header names the real servers, and neither lab
password appears anywhere in it (raw bytes or decompressed payloads)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rawrecords import raw_records

from replmon.config import build_config
from replmon.engine import build_engine
from replmon.factory import build_collector
from replmon.lab import Lab
from replmon.lab.load import WriteLoad
from replmon.output.report import render_text, report
from replmon.session import Recorder, meta_for, open_recording
from replmon.session.rerun import rerun_checks

pytestmark = pytest.mark.live


async def test_lab_session_records_and_replays_exactly(lab: Lab, tmp_path: Path) -> None:
    config = build_config(lab.settings(0.2))
    engine = build_engine(config.checks)
    path = tmp_path / "lab.rmrec"
    live, updates = [], []
    with WriteLoad(lab, rate=300):
        async with build_collector(config) as collector, \
                Recorder(path, meta_for(config, note="live test")) as rec:
            async for tick in collector.ticks(15):
                upd = engine.feed(tick)
                rec.write(tick, upd)
                live.append(tick)
                updates.append(upd)
    r = open_recording(path)
    assert r.problems == [] and r.end is not None and len(r) == 15
    assert list(r.ticks()) == live
    assert live[-1].primary.rates.mysql.qps and live[-1].primary.rates.mysql.qps > 50
    assert [r.update_at(i).open for i in range(15)] == [u.open for u in updates]  # type: ignore[union-attr]
    version = lab.primary.sql("SELECT VERSION()")[0][0]
    with lab.primary.redis() as rc:
        redis_version = rc.info("server")["redis_version"]
    p = r.meta.nodes["primary"]
    assert (p.name, p.host, p.mysql_version, p.redis_version) == \
        ("lab-primary", lab.primary.host, version, redis_version)
    assert r.meta.interval == 0.2 and r.meta.config is not None
    assert r.meta.config["primary"]["mysql"]["user"] == lab.monitor_user
    for secret in (lab.monitor_password, lab.redis_password):
        assert secret and len(secret) >= 6
        assert not any(secret.encode() in blob for blob in [path.read_bytes(),
                                                            *raw_records(path)])
    assert [len(u.open) for u in rerun_checks(r)] == [len(u.open) for u in updates]
    text = render_text(report(r))
    assert "lab-primary" in text and version in text


async def test_a_finding_opening_stores_both_processlists_and_the_replay_shows_them(
        lab: Lab, tmp_path: Path) -> None:
    """The replica's SQL thread stopped while a long statement runs on the primary: the
    tick after mysql_replication opens holds both nodes' processlists (and only the
    ticks after an opening do), and the replay's w view finds them from the opening."""
    from replmon.commands import maybe_recorder
    from replmon.pipeline import Pipeline
    from replmon.tui.replay import ReplayApp

    config = build_config(lab.settings(0.5))
    path = tmp_path / "incident.rmrec"
    lab.replica.sql("STOP SLAVE SQL_THREAD")
    try:
        with lab.primary.running("SELECT SLEEP(60) AS nightly_report") as ident:
            async with build_collector(config) as collector, \
                    maybe_recorder(config, str(path), collector) as readers:
                await Pipeline(collector.ticks(16), build_engine(config.checks),
                               readers).run()
    finally:
        lab.replica.sql("START SLAVE SQL_THREAD")
        lab.wait_replica_caught_up()
    r = open_recording(path)
    assert r.problems == []
    opened = [i for i in range(len(r)) if (u := r.update_at(i)) is not None and any(
        f.check == "mysql_replication" for f in u.opened)]
    assert opened, "the stopped SQL thread opened no finding"
    k = opened[0]
    with_lists = [i for i in range(len(r)) if r.tick_at(i).primary.mysql.processlist is not None]
    assert k + 1 in with_lists and min(with_lists) == k + 1  # nothing read before it
    assert len(with_lists) <= 3  # once per opening, not every tick
    after = r.tick_at(k + 1)
    primary = after.primary.mysql.processlist or []
    assert any(p.id == ident and p.info and "SLEEP(60)" in p.info for p in primary)
    assert after.replica.mysql.processlist is not None
    assert any(p.command == "Slave_IO" for p in after.replica.mysql.processlist)

    app = ReplayApp(r, lambda: build_engine(config.checks))
    app.cursor.seek(k)  # where n stops: the tick the finding opened
    snaps, ref = app.processlist_source()
    assert ref == r.tick_at(k).wall
    p = snaps["primary"]
    assert p is not None and p.wall == after.wall and any(x.id == ident for x in p.rows)
    assert snaps["replica"] is not None
