"""Why a source could not be read, as a class of root cause: the one reading of a
source's error that the sources' hints, source_health's findings and the screen's
node panels share.

A source's state says what happened to its sample ("unreachable", "timeout",
"auth"...); the class says why, in the terms of what to do about it:

- ``dns``: the name does not resolve (a typo, DNS, /etc/hosts): nothing on the node
  can be reached, so every source of the node fails at once, for one reason;
- ``refused``: the host answered and nothing listens on that port (the service is
  down, on another port, or bound to another address);
- ``unanswered``: no answer to the connection at all (no route, connect timed out:
  a firewall dropping packets, a wrong address, the host down);
- ``hung``: connected, but no reply in time (state "timeout");
- ``auth``: credentials, keys or grants refused (state "auth");
- ``other``: anything else (the error text says what).

The class is read from the state and the error text (the resolver's, the kernel's
and ssh's own words, which the sources pass on), so it is the same for a live tick
and for a recording made before it existed.
"""

from __future__ import annotations

import re
from enum import StrEnum

from replmon.model.base import SourceState, SourceStatus


class Failure(StrEnum):
    """The class of a source's failure (module docstring)."""

    DNS = "dns"
    REFUSED = "refused"
    UNANSWERED = "unanswered"
    HUNG = "hung"
    AUTH = "auth"
    OTHER = "other"


_DNS = re.compile(
    r"name or service not known|could not resolve|does not resolve|name resolution|"
    r"no address associated with hostname|nodename nor servname|getaddrinfo failed|"
    r"unknown (?:mysql server )?host|(?:errno|error) -(?:2|3|5)\b", re.IGNORECASE)
"""The resolver's words (glibc's gai_strerror, ssh's, pymysql's "Unknown MySQL server
host") and its negative codes: EAI_NONAME -2, EAI_AGAIN -3, EAI_NODATA -5."""
_REFUSED = re.compile(r"connection refused|(?:errno|error) 111\b", re.IGNORECASE)
_UNANSWERED = re.compile(
    r"no route to host|network is unreachable|timed out|no connection within|"
    r"(?:errno|error) (?:101|110|113)\b", re.IGNORECASE)
_NAME = re.compile(r"name (\S+) does not resolve|resolve hostname (\S+?):|"
                   r"server on '([^']+)'|connecting to (\S+?):\d+")
"""Where the sources' texts name the host: replmon's own wording first, then ssh's,
pymysql's and redis-py's."""
_RETRY = re.compile(r"\s*\((?:reconnecting in|next connection attempt in) [^)]*\)")


def failure(st: SourceStatus) -> Failure | None:
    """The class of ``st``'s failure; None for a source that is ok or absent."""
    state = st.state
    if state is SourceState.OK or state is SourceState.ABSENT:
        return None
    if state is SourceState.AUTH:
        return Failure.AUTH
    if state is SourceState.TIMEOUT:
        return Failure.HUNG
    text = st.error or ""
    if _DNS.search(text):
        return Failure.DNS
    if state is SourceState.UNREACHABLE:
        if _REFUSED.search(text):
            return Failure.REFUSED
        if _UNANSWERED.search(text):
            return Failure.UNANSWERED
    return Failure.OTHER


def unresolved_name(st: SourceStatus) -> str | None:
    """The name that does not resolve, as the error gives it (None if it does not)."""
    m = _NAME.search(st.error or "")
    if m is None:
        return None
    return next(g for g in m.groups() if g).strip("'\"")


def steady_error(error: str | None) -> str:
    """The error text without the retry countdown a source appends ("(reconnecting in
    3 s)"): the same failure reads the same from tick to tick."""
    return _RETRY.sub("", error or "")


_WORDS = {Failure.REFUSED: "connection refused", Failure.UNANSWERED: "no answer to the connection"}


def short_words(st: SourceStatus) -> str:
    """The failure in a few words, for a line of its own (a node panel's): "unknown name
    db9.example", "connection refused at 10.0.0.5:3306", else the error text (without
    its retry countdown)."""
    why = failure(st)
    if why is Failure.DNS:
        return f"unknown name {unresolved_name(st) or '?'}"
    text = steady_error(st.error)
    words = _WORDS.get(why) if why is not None else None
    if words is None:
        return text or "no detail"
    where = text.split(": ", 1)[0] if ": " in text else ""
    return f"{words} at {where}" if where else words
