"""The Prometheus alert rules for ``replmon serve`` (``replmon rules`` prints them).

One alert per severity on ``replmon_finding``: the finding already held its
``open_after`` in replmon (and a flapping one stays one open finding), so the rules add
no ``for:`` of their own on it; Alertmanager routes on the ``severity`` label. The
``roles`` finding (a switchover or failover, #40) has two alerts of its own instead,
``ReplmonSwitchover`` and ``ReplmonSwitchoverHalfDone``, which name the new primary
(the template's comments say why and how). Then the plumbing: the replmon process not
scraped (``up``), a pair that stopped ticking, a source that cannot be read, and
replmon's own late ticks. The scrape job must be named ``replmon`` for ``ReplmonDown``
(docs/prometheus.md).

Every alert of a pair carries, in its ``screen`` annotation, the command that opens that
pair's live screen (``replmon --config FLEET --pair PAIR``): the engineer paged for a
pair is one paste away from it. ``replmon rules --config FLEET`` writes the fleet file's
path there; without it, ``FLEET.toml`` stands for it.
"""

from __future__ import annotations

import json
import os
import shlex

FLEET_PLACEHOLDER = "FLEET.toml"
"""What stands for the fleet file in the ``screen`` annotation when it is not known."""
_SCREEN = "@SCREEN@"

_TEMPLATE = """\
# Alert rules for replmon serve (replmon rules --config FLEET.toml > replmon.rules.yml)
# Every finding's title, numbers, cause and next step: http://<replmon>/findings.json
groups:
  - name: replmon-findings
    rules:
      - alert: ReplmonFindingCritical
        expr: replmon_finding{severity="critical", check!="roles"} == 1
        labels:
          severity: critical
        annotations:
          screen: @SCREEN@
          summary: "{{ $labels.pair }} {{ $labels.node }}: {{ $labels.check }} critical"
          description: >-
            replmon's check {{ $labels.check }} (key "{{ $labels.key }}") is critical on the
            {{ $labels.node }} of pair {{ $labels.pair }}. Title, numbers, cause and next
            step: http://{{ $labels.instance }}/findings.json
      - alert: ReplmonFindingWarning
        expr: replmon_finding{severity="warning", check!="roles"} == 1
        labels:
          severity: warning
        annotations:
          screen: @SCREEN@
          summary: "{{ $labels.pair }} {{ $labels.node }}: {{ $labels.check }} warning"
          description: >-
            replmon's check {{ $labels.check }} (key "{{ $labels.key }}") warns on the
            {{ $labels.node }} of pair {{ $labels.pair }}. Title, numbers, cause and next
            step: http://{{ $labels.instance }}/findings.json
      - alert: ReplmonFindingInfo
        expr: replmon_finding{severity="info", check!="roles"} == 1
        labels:
          severity: info
        annotations:
          screen: @SCREEN@
          summary: "{{ $labels.pair }} {{ $labels.node }}: {{ $labels.check }} info"
          description: >-
            For dashboards and tickets, not for a pager: route severity="info" to a
            receiver that does not page.
  # A switchover or failover (replmon's check "roles"): one alert per event, naming the
  # new primary. The roles finding is left out of the ReplmonFinding* alerts above, which
  # would raise a second alert for the same event and cannot name the primary (its
  # node label is "pair"). These two keep every label of the finding (incident and
  # incident_role included), so the inhibit rule (replmon rules --alertmanager) keeps
  # the symptoms a half-done change causes under them, as it did under ReplmonFinding*.
  # Which of the two: replmon_pair_role_layers_at_odds (layers naming the other node as
  # the primary, or without the direction they had): 0, the change is complete (or the
  # roles were the other way round from the start): ReplmonSwitchover, info; above 0,
  # half done: ReplmonSwitchoverHalfDone at the finding's own severity (info while the
  # change is within its hold, 15 s, warning after it, critical after 120 s), so a
  # planned switchover whose layers move a second apart raises no half-done page, and a
  # change that stays half done raises no "switchover complete". The new primary's name
  # comes from replmon_node_role_info{role="primary"} (its host label) as a "primary"
  # label, joined on pair and instance (a pair moved between shards is two targets).
  - name: replmon-roles
    rules:
      - alert: ReplmonSwitchover
        expr: >-
          (replmon_finding{check="roles", severity="info", key!~"(mysql|redis|drbd):.+"}
            * on(instance, pair) group_left(primary) label_replace(
                replmon_node_role_info{role="primary"}, "primary", "$1", "host", "(.*)"))
          and on(instance, pair) replmon_pair_role_layers_at_odds == 0
        labels:
          severity: info
        annotations:
          screen: @SCREEN@
          summary: "{{ $labels.pair }}: {{ $labels.primary }} is now the primary"
          description: >-
            The roles of pair {{ $labels.pair }} changed, every layer agreeing:
            {{ $labels.primary }} is the primary and the other node replicates from it (a
            switchover or failover, or the roles were the other way round from the start).
            replmon's checks now judge the pair as it is. Check that clients write to
            {{ $labels.primary }} only. When, and each layer's say:
            http://{{ $labels.instance }}/findings.json
      # A service that fails over on its own ([roles] together; Redis under Sentinel by
      # default): its event's key is "<service>:<new primary>", and the pair's primary
      # (replmon_node_role_info{role="primary"}) is not the one that moved.
      - alert: ReplmonServiceSwitchover
        expr: >-
          label_replace(label_replace(
            replmon_finding{check="roles", severity="info", key=~"(mysql|redis|drbd):.+"},
            "service", "$1", "key", "(mysql|redis|drbd):.+"),
            "primary", "$1", "key", "[a-z]+:(.+)")
        labels:
          severity: info
        annotations:
          screen: @SCREEN@
          summary: >-
            {{ $labels.pair }}: {{ $labels.primary }} is now the {{ $labels.service }} primary
          description: >-
            The {{ $labels.service }} of pair {{ $labels.pair }} failed over on its own
            (Redis under Sentinel, or as [roles] together says): {{ $labels.primary }} is
            its primary now, the other services stay where they were. Check that clients
            of {{ $labels.service }} write to {{ $labels.primary }} only. When, and what
            Sentinel said: http://{{ $labels.instance }}/findings.json
      - alert: ReplmonSwitchoverHalfDone
        expr: >-
          (replmon_finding{check="roles"}
            * on(instance, pair) group_left(primary) label_replace(
                replmon_node_role_info{role="primary"}, "primary", "$1", "host", "(.*)"))
          and on(instance, pair) replmon_pair_role_layers_at_odds > 0
        annotations:
          screen: @SCREEN@
          summary: "{{ $labels.pair }}: switchover to {{ $labels.primary }} half done"
          description: >-
            The roles of pair {{ $labels.pair }} are changing and the layers disagree:
            {{ $labels.primary }} is the primary for the first layer that moved, another
            still names the old primary or has lost its direction (nobody replicates
            from anybody, or the old primary does not follow yet). Finish the change on
            the layer that did not move (REPLICAOF, CHANGE MASTER TO / CHANGE REPLICATION
            SOURCE TO, drbdadm primary) or roll it back, and make sure writes go to one
            node only. Each layer's say:
            http://{{ $labels.instance }}/findings.json
  - name: replmon-plumbing
    rules:
      - alert: ReplmonDown
        expr: up{job="replmon"} == 0
        for: 2m
        labels:
          severity: critical
        annotations:
          summary: "replmon serve on {{ $labels.instance }} is not scraped"
          description: >-
            Prometheus has not scraped replmon serve on {{ $labels.instance }} for 2
            minutes: none of its pairs is watched.
      - alert: ReplmonPairStale
        expr: replmon_pair_last_tick_age_seconds > 3 * replmon_pair_interval_seconds + 10
        for: 1m
        labels:
          severity: critical
        annotations:
          screen: @SCREEN@
          summary: "replmon has stopped sampling pair {{ $labels.pair }}"
          description: >-
            No tick from pair {{ $labels.pair }} for {{ $value | humanizeDuration }}:
            its pipeline is stuck or ended (replmon's log says why).
      - alert: ReplmonSourceDown
        expr: replmon_source_up == 0
        for: 5m
        labels:
          severity: warning
        annotations:
          screen: @SCREEN@
          summary: "{{ $labels.pair }} {{ $labels.node }}: {{ $labels.source }} unreadable"
          description: >-
            replmon cannot read {{ $labels.source }} on {{ $labels.host }} ({{ $labels.node }}
            of pair {{ $labels.pair }}) for 5 minutes; replmon_source_state says why
            (unreachable, auth, timeout, parse_error, error).
      - alert: ReplmonTicksLate
        expr: >-
          rate(replmon_ticks_late_total[5m]) > 0.1 * rate(replmon_ticks_total[5m])
        for: 10m
        labels:
          severity: warning
        annotations:
          screen: @SCREEN@
          summary: "replmon ticks late for pair {{ $labels.pair }}"
          description: >-
            More than 10 % of pair {{ $labels.pair }}'s ticks started late for 10 minutes:
            replmon serve is short of CPU, or a source keeps hitting its timeout.
"""


INHIBIT = """\
# Alertmanager: one page per incident (replmon rules --alertmanager; goes under the
# inhibit_rules: key of alertmanager.yml). replmon labels each finding with its pair's
# incident (named by its root: check/node/key) and its role in it: a consequence's
# alert stays quiet while its root's fires, and notifies on its own once the root has
# resolved (replmon/model/incidents.py). A switchover's alerts carry the roles finding's
# labels (incident, incident_role) and take part as the findings' alerts do.
inhibit_rules:
  - source_matchers:
      - alertname=~"ReplmonFinding(Critical|Warning|Info)|ReplmonSwitchover(HalfDone)?"
      - incident_role="root"
    target_matchers:
      - alertname=~"ReplmonFinding(Critical|Warning|Info)|ReplmonSwitchover(HalfDone)?"
      - incident_role="consequence"
    equal: [pair, incident]
"""
"""The inhibit rule that makes an incident one page (``replmon rules --alertmanager``)."""


def screen_command(fleet: str | None = None) -> str:
    """``replmon --config FLEET --pair {{ $labels.pair }}``: the fleet file's absolute
    path (shell-quoted) when given, else the placeholder."""
    path = shlex.quote(os.path.abspath(fleet)) if fleet else FLEET_PLACEHOLDER
    return f"replmon --config {path} --pair {{{{ $labels.pair }}}}"


def rules(fleet: str | None = None) -> str:
    """The rules (YAML text), with ``fleet`` (the path of the fleet file serve runs) in
    each pair alert's ``screen`` annotation. ValueError for a path Prometheus would take
    for a template (``{{``)."""
    command = screen_command(fleet)
    if "{{" in command.replace("{{ $labels.pair }}", ""):
        raise ValueError(f"{fleet!r}: a path with {{{{ would be read as a template")
    return _TEMPLATE.replace(_SCREEN, json.dumps(command))  # a JSON string is YAML's


RULES = rules()
"""The rules with ``FLEET.toml`` standing for the fleet file."""
