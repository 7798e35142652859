"""Named exit codes and the one exception type that carries cause, place and fix to `main`."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit statuses, one per kind of failure a user can act on."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    UNSUPPORTED_ALGORITHM = 3
    CONNECTION_FAILED = 4
    AUTH_FAILED = 5
    MISSING_BINARY = 6
    STORAGE = 7
    SERVER_START = 8
    MEASUREMENT_FAILED = 9
    REGRESSION = 10  # `compare --fail-if`: B is significantly slower than allowed
    NOTHING_COMPARED = 11  # `compare --fail-if`: the two runs have no row in common, so the gate checked nothing
    LOGINS_FAILED = 12  # `interop`: at least one login of the soak failed (each is listed with its words)
    INTERRUPTED = 130
    TERMINATED = 143


class SshbenchError(Exception):
    """An error a user can fix: what went wrong, where, and what to do about it."""

    def __init__(self, cause: str, *, place: str = "", fix: str = "", code: ExitCode = ExitCode.FAILURE):
        super().__init__(cause)
        self.cause = cause
        self.place = place
        self.fix = fix
        self.code = code

    def render(self) -> str:
        """Return the one-line message shown to the user."""
        text = self.cause
        if self.place:
            text += f" ({self.place})"
        if self.fix:
            text += f". Fix: {self.fix}"
        return text


class Unfinished(SshbenchError):
    """A run stopped short on purpose with what it measured kept (incomplete): its tables are shown, then this."""

    def __init__(self, run_id: int, cause: str, *, place: str = "", fix: str = ""):
        super().__init__(cause, place=place, fix=fix, code=ExitCode.MEASUREMENT_FAILED)
        self.run_id = run_id


class Terminated(BaseException):
    """Raised from the SIGTERM handler so that every `finally` and context manager runs."""
