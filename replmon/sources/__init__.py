"""Sources: each knows one thing about one node and how to fetch it.
Fetching goes through a runner (runner.py); pure ``*_parse.py`` modules turn
text into samples."""

from replmon.sources.mysql_driver import import_pymysql

import_pymysql()  # before any source imports it: cryptography only when a login needs it
