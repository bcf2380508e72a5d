"""The fleet: ``replmon serve`` watches many pairs and feeds Prometheus/Alertmanager.

- ``config``: the fleet TOML (``[[pair]]`` tables on shared defaults) into one Config
  per pair;
- ``state``: the pipeline reader that keeps each pair's latest tick and findings;
- ``families``: the table of what is exported (one row per metric family), each row
  with its reader from ``readers`` (a pair's state -> samples);
- ``metrics``: that table over the pairs' states as Prometheus text (prometheus_client
  writes it): the /metrics page, and docs/metrics.md;
- ``http``: /metrics, /healthz, /findings.json;
- ``rules``: the alert rules ``replmon rules`` prints;
- ``serve``: N pipelines (collector → engine → readers), one per pair, in one loop.
"""
