"""The steps of a login after its key exchange, as a sample stores them among its phases (written by
ssh/authsteps.py from `ssh -v` lines, read by analyse/logins.py): the authentication phase's, then the session's."""

from __future__ import annotations

STEPS = (  # in the order they happen; the part before the dot is the phase they split
    "auth.service",
    "auth.methods",
    "auth.refused",
    "auth.offer",
    "auth.signature",
    "session.channel",
    "session.command",
    "session.close",
)
TRIED = "auth.tried"  # a count among them: methods and keys tried and refused before the one accepted
