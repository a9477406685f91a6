"""A progress bar for long commands, drawn by rich on a terminal and nowhere else.

Scripts and ``--json`` callers read the command's output, so the bar appears only when
the output is a terminal; it is drawn on stderr-like console output and never mixes with
the lines the command prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

Advance = Callable[[int, int, str], None]


def _is_terminal(stream) -> bool:
    target = getattr(stream, "_out", stream)  # Django's OutputWrapper wraps the real stream
    isatty = getattr(target, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


@contextmanager
def progress_bar(stream, label: str, *, enabled: bool = True) -> Iterator[Advance]:
    """Yield ``advance(done, total, what)``; draws a bar only on a terminal."""
    if not enabled or not _is_terminal(stream):
        yield lambda done, total, what: None
        return
    console = Console(file=getattr(stream, "_out", stream))
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[what]}", style="dim"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=None, what="")

        def advance(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, what=what[-60:])

        yield advance
