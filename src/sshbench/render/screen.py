"""How much a screen says, and sentences that fit it.

A terminal gets the brief screen: the answer, and only the warnings a reader must act on; what it leaves out is
counted in one line and said whole by `--details` (or `show --details RUN`). Piped output, `--wide`, `--details`,
the report and a library caller get the complete screen: every caveat and figure. The CLI chooses once per command
(`cli/common.out`); the printers ask `brief()`.

Every sentence is wrapped at the console's width with a hanging indent (its continuation lines indented under its
first word), so that a long one reads as one paragraph, never as unindented lines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from rich.console import Console
from rich.text import Text

_BRIEF: ContextVar[bool] = ContextVar("sshbench_brief", default=False)
HANG = 4  # a wrapped sentence's continuation lines start this far in


def brief() -> bool:
    """Return True when the screen is the brief one (a terminal without --details)."""
    return _BRIEF.get()


def set_brief(on: bool) -> None:
    """Make the screens of this command brief (True) or complete."""
    _BRIEF.set(on)


@contextlib.contextmanager
def briefly(on: bool = True) -> Iterator[None]:
    """Print brief (or complete) screens for as long as the block runs."""
    token = _BRIEF.set(on)
    try:
        yield
    finally:
        _BRIEF.reset(token)


def hung(console: Console, line: str, markup: bool = False, hang: int = HANG) -> Text:
    """Return a sentence wrapped at the console's width, its continuation lines indented by `hang`."""
    text = Text.from_markup(line) if markup else Text(line)
    width = console.width
    if text.cell_len <= width:
        return text
    hang = max(hang, len(text.plain) - len(text.plain.lstrip(" ")) + 2)  # under the sentence's first word
    lines = text.wrap(console, max(width - hang, 20))
    out = Text()
    for i, piece in enumerate(lines):
        if i:
            out.append("\n" + " " * hang)
            piece = piece[len(piece.plain) - len(piece.plain.lstrip()) :]
        out.append_text(piece)
    return out


def say(console: Console, line: str, markup: bool = False, style: str | None = None) -> None:
    """Print one sentence wrapped with a hanging indent (`markup`: it carries rich markup)."""
    console.print(hung(console, line, markup), style=style, highlight=False, soft_wrap=True)
