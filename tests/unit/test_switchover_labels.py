"""What `report` and `check --replay` say of the nodes of a recording with a switchover
(issue #40): a peak is one node's (by its name, with the role it had at the peak), never
a role's that two nodes took turns in; the nodes `check --replay` names are the
recording header's, the roles the command line gave, also when the recording starts
after a switchover."""

from __future__ import annotations

import json
from pathlib import Path

from replmon.commands import check_replay
from replmon.config import build_config
from replmon.engine import build_engine
from replmon.output.nagios import render_json
from replmon.output.report import render_text, report
from replmon.session import RecordingWriter, meta_for, open_recording
from replmon.session.facts import PEAKS, metric

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "sample_sessions" / "planned_switchover.rmrec"


def test_each_peak_is_one_nodes_by_its_name_and_its_role_then() -> None:
    with open_recording(SESSION) as rec:
        ticks = list(rec.ticks())
        rep = report(rec)
    given = {n.given: n.name for n in ticks[0].nodes}
    assert given == {"primary": "lab-primary", "replica": "lab-replica"}
    # each node's own extreme of each rate, with the tick it was reached in
    want: dict[str, tuple[float, float, str]] = {}
    for t in ticks:
        for n in t.nodes:
            for label, path in PEAKS.items():
                v = metric(n, path)
                key = f"{n.given} {label}"
                best = want.get(key)
                if isinstance(v, int | float) and (
                        best is None or (v < best[0] if "lowest" in label else v > best[0])):
                    want[key] = (v, t.wall, n.role)
    want = {k: w for k, w in want.items() if round(w[0], 1) or "lowest" in k}  # no 0 peaks
    assert rep["peaks"].keys() == want.keys()
    got = {key: (p["value"], p["at"]) for key, p in rep["peaks"].items()}
    assert got == {key: (v, at) for key, (v, at, _) in want.items()}
    for key, peak in rep["peaks"].items():
        assert (peak["node"], peak["role"]) == (given[key.partition(" ")[0]], want[key][2])
    # both nodes were the primary and the replica in turn: a peak says which it was then
    assert {p["role"] for p in rep["peaks"].values() if p["node"] == "lab-primary"} \
        == {"primary", "replica"}
    text = render_text(rep)
    qps = rep["peaks"]["replica mysql qps"]
    assert f"lab-replica ({qps['role']}) mysql qps" in text, text


def test_check_replay_names_the_nodes_of_the_header_after_a_switchover(
        tmp_path: Path) -> None:
    """A recording that starts with the pair switched over (lab-replica, given as the
    replica, is the primary: the shipped session's ticks 40..59): its header keeps each
    node under the role the command line gave it, with its own host, and
    `check --replay` names those."""
    with open_recording(SESSION) as rec:
        ticks = [rec.tick_at(i) for i in range(40, 60)]
    assert ticks[0].primary.name == "lab-replica"
    config = build_config({"primary": {"host": "10.0.0.1", "name": "lab-primary"},
                           "replica": {"host": "10.0.0.2", "name": "lab-replica"}})
    path = tmp_path / "switched.rmrec"
    engine = build_engine(entry_points=False)
    with RecordingWriter(path, meta_for(config)) as w:
        for t in ticks:
            w.write(t, engine.feed(t))
    with open_recording(path) as rec:
        header = {role: (n.name, n.host) for role, n in rec.meta.nodes.items()}
    assert header == {"primary": ("lab-primary", "10.0.0.1"),
                      "replica": ("lab-replica", "10.0.0.2")}
    run = check_replay(str(path))
    assert run.nodes == {"primary": "lab-primary", "replica": "lab-replica"}
    assert json.loads(render_json(run))["nodes"] == run.nodes
