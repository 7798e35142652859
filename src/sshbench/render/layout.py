"""Tables that fit the terminal: numbers are never cut. Optional columns are shed in a fixed order, then long
algorithm names fold at their own separators (`-`, `@`, `.`), and the caller says what was hidden.

A column is a title, its cells, and how it may give way: `keep` columns always stay, `fold` columns may
wrap their names, and the others carry a `shed` rank (lowest goes first).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import render
from rich.table import Table

from sshbench.render import screen

FOLD_TRIES = 4000  # width combinations of the foldable columns tried for the fewest lines, at most
GAP = 2  # columns are separated by a padding cell and a blank divider
MIN_FOLD = 12  # a folded name column is never narrower than this


@dataclass(frozen=True)
class Column:
    """One column: its title, one cell per row (rich markup), alignment, and how it gives way when narrow."""

    title: str
    cells: tuple[str, ...]
    right: bool = False
    shed: int | None = None  # None: always kept; lower ranks are shed first
    fold: bool = False  # names that may wrap at their separators
    hidden_as: str = ""  # what the note under a table calls this column when it is hidden (default: its title)
    narrow: bool = False  # the title may wrap onto several lines

    def cells_width(self) -> int:
        """Return the width of the longest cell line."""
        return max((_plain_width(line) for cell in self.cells for line in cell.split("\n")), default=1)

    def width(self) -> int:
        """Return the width shown: the longest cell, and the whole title (or its longest word when narrow)."""
        title = max((len(w) for w in self.title.split()), default=0) if self.narrow else len(self.title)
        return max(self.cells_width(), title, 1)


def _plain_width(markup: str) -> int:
    """Return the width of a cell without its markup."""
    return cell_len(render(markup).plain) if "[" in markup else cell_len(markup)


def total_width(columns: Sequence[Column]) -> int:
    """Return the width of a table of these columns."""
    return sum(c.width() for c in columns) + GAP * (len(columns) - 1)


def fit(columns: Sequence[Column], width: int | None) -> tuple[list[Column], list[Column]]:
    """Return the columns to show in `width` (None: all) and those shed, with long names folded if needed."""
    shown = list(columns)
    shed: list[Column] = []
    if width is None or total_width(shown) <= width:
        return shown, shed
    shown = [replace(c, narrow=True) for c in shown]  # titles wrap before anything is hidden
    for rank in sorted({c.shed for c in columns if c.shed is not None}):
        if total_width(shown) <= width:
            break
        shed += [c for c in shown if c.shed == rank]
        shown = [c for c in shown if c.shed != rank]
    return _fold(shown, width), shed


def _fold(columns: list[Column], width: int) -> list[Column]:
    """Fold the foldable columns' names so that the table fits in the fewest lines (`_fewest_lines`), else narrow
    the widest of them until it fits (never below MIN_FOLD)."""
    if total_width(columns) <= width:
        return columns
    best = _fewest_lines(columns, width)
    if best is not None:
        return [
            replace(c, cells=tuple(fold_name(cell, best[i]) for cell in c.cells)) if i in best else c
            for i, c in enumerate(columns)
        ]
    widths = {i: c.width() for i, c in enumerate(columns)}
    excess = total_width(columns) - width
    while excess > 0:
        candidates = [i for i, c in enumerate(columns) if c.fold and widths[i] > MIN_FOLD]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    return [
        replace(c, cells=tuple(fold_name(cell, widths[i]) for cell in c.cells)) if widths[i] < c.width() else c
        for i, c in enumerate(columns)
    ]


def _fewest_lines(columns: list[Column], width: int) -> dict[int, int] | None:
    """Return the widths of the foldable columns (by index) that fit the table in `width` with the fewest lines of
    folded names, the widest such on a tie (None: more combinations than FOLD_TRIES, or none fits)."""
    folds = [i for i, c in enumerate(columns) if c.fold and c.width() > MIN_FOLD]
    room = width - (total_width(columns) - sum(columns[i].width() for i in folds))
    choices = [range(MIN_FOLD, columns[i].width() + 1) for i in folds]
    if not folds or math.prod(len(r) for r in choices) > FOLD_TRIES:
        return None
    best: tuple[int, int, dict[int, int]] | None = None
    for widths in itertools.product(*choices):
        if sum(widths) > room:
            continue
        chosen = dict(zip(folds, widths, strict=True))
        lines = sum(
            max(fold_name(columns[i].cells[r], w).count("\n") for i, w in chosen.items())
            for r in range(len(columns[folds[0]].cells))
        )
        if best is None or (lines, -sum(widths)) < (best[0], best[1]):
            best = (lines, -sum(widths), chosen)
    return None if best is None else best[2]


def fold_name(name: str, width: int) -> str:
    """Break a long algorithm name into lines of at most `width`, after `-`, `.` or a space, or before `@`."""
    lines: list[str] = []
    rest = name
    while len(rest) > width:
        at = rest.find("@", 1, width + 1)  # the vendor suffix (@openssh.com) goes on its own line first
        cut = at if at > 0 else max(rest.rfind(sep, 0, width) + 1 for sep in "-. ")  # a client's words too
        cut = cut if cut > 0 else width
        lines.append(rest[:cut])
        rest = rest[cut:]
    return "\n".join([*lines, rest])


def build(columns: Sequence[Column]) -> Table:
    """Return a rich table of exactly these columns and widths: a rule under the titles, no frame."""
    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        expand=False,
    )
    for c in columns:
        table.add_column(c.title, justify="right" if c.right else "left", width=c.width())
    for row in zip(*(c.cells for c in columns), strict=True):
        table.add_row(*row)
    return table


def hidden_note(shed: Sequence[Column], full: Sequence[Column]) -> str | None:
    """Return the line that says which columns a narrow terminal hides and what shows them."""
    names = list(dict.fromkeys(c.hidden_as or c.title for c in shed))
    if not names:
        return None
    if screen.brief():
        return f"  [dim]hidden at this width: {', '.join(names)} (--wide)[/]"
    return f"  [dim]hidden at this width: {', '.join(names)} (--wide, or a terminal of {total_width(full)} columns)[/]"


def ms_cell(seconds: float | None) -> str:
    """Return seconds as a cell in ms (one decimal), or blank."""
    return "" if seconds is None else f"{seconds * 1000:.1f}"


def print_fitted(console: Console, title: str, columns: Sequence[Column]) -> None:
    """Print a title and its table fitted to the console's width, then the note naming what it hid."""
    shown, shed = fit(columns, console.width)
    screen.say(console, title, style="bold")
    console.print(build(shown))
    if note := hidden_note(shed, columns):
        screen.say(console, note, markup=True)
