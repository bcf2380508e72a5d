"""One shallow error tree. A failing source never raises into the collector:
its error becomes a SourceStatus inside the tick. These exceptions are for the
layers below (parsers, connections) and above (config, CLI)."""


class ReplmonError(Exception):
    """Base of every error replmon raises on purpose."""


class ConfigError(ReplmonError):
    """Bad command line or config file; the message says what to change."""


class SourceError(ReplmonError):
    """A source could not fetch its data (connection, auth, command).

    ``state`` is the SourceState value the sample gets ("unreachable", "auth",
    "absent", "error", ...); ``hint`` says what the user can do about it.
    """

    def __init__(self, message: str, *, state: str = "error", hint: str | None = None) -> None:
        super().__init__(message)
        self.state = state
        self.hint = hint


class ParseError(ReplmonError):
    """Text from a server or /proc did not have the expected shape."""


class LabError(ReplmonError):
    """The throwaway MariaDB/Redis lab could not start or stop."""


class SessionError(ReplmonError):
    """A recording could not be written or read."""
