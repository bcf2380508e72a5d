"""replmon's check modules (installed as ``replmon.checks``).

One check per module; each reads a window of ticks and returns findings.
The check engine and the library arrive with the checks issue.
"""
