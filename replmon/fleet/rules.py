"""The Prometheus alert rules for ``replmon serve`` (``replmon rules`` prints them).

One alert per severity on ``replmon_finding``: the finding already held its
``open_after`` in replmon (and a flapping one stays one open finding), so the rules add
no ``for:`` of their own on it; Alertmanager routes on the ``severity`` label. Then the
plumbing: the replmon process not scraped (``up``), a pair that stopped ticking, a
source that cannot be read, and replmon's own late ticks. The scrape job must be
named ``replmon`` for ``ReplmonDown`` (docs/prometheus.md).
"""

from __future__ import annotations

RULES = """\
# Alert rules for replmon serve (replmon rules > /etc/prometheus/replmon.rules.yml)
# Every finding's title, numbers, cause and next step: http://<replmon>/findings.json
groups:
  - name: replmon-findings
    rules:
      - alert: ReplmonFindingCritical
        expr: replmon_finding{severity="critical"} == 1
        labels:
          severity: critical
        annotations:
          summary: "{{ $labels.pair }} {{ $labels.node }}: {{ $labels.check }} critical"
          description: >-
            replmon's check {{ $labels.check }} (key "{{ $labels.key }}") is critical on the
            {{ $labels.node }} of pair {{ $labels.pair }}. Title, numbers, cause and next
            step: http://{{ $labels.instance }}/findings.json
      - alert: ReplmonFindingWarning
        expr: replmon_finding{severity="warning"} == 1
        labels:
          severity: warning
        annotations:
          summary: "{{ $labels.pair }} {{ $labels.node }}: {{ $labels.check }} warning"
          description: >-
            replmon's check {{ $labels.check }} (key "{{ $labels.key }}") warns on the
            {{ $labels.node }} of pair {{ $labels.pair }}. Title, numbers, cause and next
            step: http://{{ $labels.instance }}/findings.json
      - alert: ReplmonFindingInfo
        expr: replmon_finding{severity="info"} == 1
        labels:
          severity: info
        annotations:
          summary: "{{ $labels.pair }} {{ $labels.node }}: {{ $labels.check }} info"
          description: >-
            For dashboards and tickets, not for a pager: route severity="info" to a
            receiver that does not page.
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
          summary: "replmon ticks late for pair {{ $labels.pair }}"
          description: >-
            More than 10 % of pair {{ $labels.pair }}'s ticks started late for 10 minutes:
            replmon serve is short of CPU, or a source keeps hitting its timeout.
"""
