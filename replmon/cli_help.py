"""The epilogs of ``replmon --help`` and its subcommands' help (examples, exit codes)."""

EXAMPLES = """\
examples:
  replmon --primary db163 --replica db162
      the live screen (q quits, ? explains every column)
  replmon --lab
      the live screen on a throwaway MariaDB + Redis pair with a write load
  replmon --primary db163 --replica db162 --plain | tee pair.log
      no TUI: text rows, findings as they open and close
  replmon --lab sample --count 10
      start a throwaway MariaDB + Redis pair on loopback (needs mariadb-server
      and redis-server installed), put a write load on it, print 10 ticks
  replmon --primary db163 --replica db162 sample
      MySQL on 3306 and Redis on 6379 of each node; credentials from
      ~/.my.cnf [client] or REPLMON_MYSQL_PASSWORD / REPLMON_REDIS_PASSWORD
  replmon --primary 127.0.0.1 --replica 127.0.0.1 \\
      --primary-mysql monitor@:3306 --replica-mysql monitor@:3307 \\
      --primary-redis :6379 --replica-redis :6380 sample --json --count 5
  replmon --config replmon.toml sample --json | jq .replica.mysql.replication

connection options go before or after the command (sample, check, record).

remote nodes: host and DRBD metrics of a node that is not this machine are read
  over ssh (BatchMode, one connection per node; ~/.ssh/config applies); override
  with --primary-ssh / --replica-ssh off | local | [USER@]HOST[:PORT]

endpoint syntax (--primary-mysql, --replica-mysql, --primary-redis,
  --replica-redis): off | :PORT | HOST:PORT | USER@HOST:PORT | /path/to/socket |
  mysql://USER@HOST:PORT
  a password in a URL is hidden from ps once replmon has parsed it (with a
  warning); safer: ~/.my.cnf, REPLMON_MYSQL_PASSWORD / REPLMON_REDIS_PASSWORD,
  password_env in the config, or --ask-pass / --ask-redis-pass (no-echo prompts)
"""

CHECK_EXAMPLES = """\
examples:
  replmon --primary db163 --replica db162 check
  replmon check --config replmon.toml --duration 30s --format json
  replmon --lab check --duration 5s
  replmon check --replay incident.rmrec --config stricter.toml
      judge a recording by other thresholds

exit codes (Monitoring Plugins / Nagios / Icinga):
  0 OK        no finding above info open at the end
  1 WARNING   a warning open at the end (none critical)
  2 CRITICAL  a critical finding open at the end
  3 UNKNOWN   the pair could not be judged: bad arguments or config, no source
              of either node readable, an unreadable recording

output: line 1 is the status line with perfdata after '|'
  ('label'=value[UOM];warn;crit;min;max per node: replication lag, threads,
  Redis link/offset lag/memory %, DRBD out-of-sync, QPS); it is never wrapped.
  The lines after it list the findings. critical=N warning=N info=N count the
  open findings; flapping=N those that opened 3 times in 600 s (held open as
  one, see docs/checks.md); U is a value nobody could know.

duration and timeouts: NRPE kills a command after command_timeout (60 s by
  default in nrpe.cfg) and check_nrpe gives up after -t (10 s by default): with
  the default 10 s of sampling, call check_nrpe -t 20 (or more), or sample less
  (--duration 8s; the checks' longest hold is 3 s past the first tick). Icinga's
  check_timeout: the same.

thresholds: [checks.<id>] tables in the TOML config (see docs/checks.md), e.g.
  [checks.mysql_replication]
  lag_warning_s = 60
  [checks.throughput_collapse]
  enabled = false
"""

RECORD_EXAMPLES = """\
examples:
  replmon --primary db163 --replica db162 record \\
      -o /var/lib/replmon/pair.rmrec --max-age 1d --keep 14
  replmon --primary db163 --replica db162 --record incident.rmrec
      the live screen, recorded
  replmon replay incident.rmrec
  replmon report incident.rmrec \\
      --csv primary.rates.mysql.qps,replica.rates.mysql.qps
  replmon check --replay incident.rmrec --format json
"""

CUT_EXAMPLES = """\
examples:
  replmon cut pair.rmrec --incident 2 -o incident-2.rmrec
      incident 2 (as report numbers it), with --margin (60s) before and after
  replmon cut pair.rmrec --from 03:10:00 --to 03:25:00
  replmon cut pair.rmrec --from +60m --to +90m -o half-hour.rmrec
  replmon cut pair.rmrec --from '#5000' --to '#5600'

the cut holds the checks' warm-up (300 s of ticks) before the stretch; check
  --replay and report of the cut count only the incidents that open inside the
  stretch; replay shows the warm-up too.

exit codes: 0 written (damage in FILE said on stderr), 1 no intact tick in the
  stretch, 2 FILE is not a readable recording or OUT exists.
"""

SERVE_EXAMPLES = """\
examples:
  replmon serve --config fleet.toml           # 127.0.0.1:9465, 5 s ticks
  replmon serve --config fleet.toml --listen 0.0.0.0:9465 --plain
  replmon rules --config fleet.toml > /etc/prometheus/rules/replmon.yml
  curl -s localhost:9465/findings.json

access: every page (/metrics, /findings.json with each finding's title, numbers
  and cause, /healthz) is readable by anyone who reaches the address: on 0.0.0.0
  put basic_auth (username, password_env) and tls (certfile, keyfile) in the
  fleet file, or a firewall in front of it (docs/prometheus.md "Access").

fleet.toml:
  interval = "5s"
  [defaults]
  mysql = { user = "monitor", password_env = "REPLMON_MYSQL_PASSWORD" }
  [[pair]]
  name = "shop"
  primary = "db163"
  replica = "db162"

exit codes: 0 stopped by SIGTERM/SIGINT, 1 a pair's pipeline failed, 2 a bad
  fleet file or an address that cannot be bound (one line on stderr).
"""
