"""The fleet: ``replmon serve`` watches many pairs and feeds Prometheus/Alertmanager.

- ``config``: the fleet TOML (``[[pair]]`` tables on shared defaults) into one Config
  per pair;
- ``state``: the pipeline reader that keeps each pair's latest tick and findings;
- ``metrics``: those states as Prometheus metric families (prometheus_client), with
  the table that docs/metrics.md is generated from;
- ``http``: /metrics, /healthz, /findings.json;
- ``rules``: the alert rules ``replmon rules`` prints;
- ``serve``: N pipelines (collector → engine → readers), one per pair, in one loop.
"""
