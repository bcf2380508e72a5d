"""Sources: each knows one thing about one node and how to fetch it.
Fetching goes through a runner (runner.py); pure ``*_parse.py`` modules turn
text into samples."""
