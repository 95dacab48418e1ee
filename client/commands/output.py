"""What the local commands print: progress bars on stderr (in a terminal, not under
``--json``) and a result as lines or as JSON on stdout. Every type's commands use these."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

import click
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID,
                           TextColumn, TimeElapsedColumn, TimeRemainingColumn)

if TYPE_CHECKING:
    from snark.groth16 import SetupProgress


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Progress]:
    """A transient rich progress display on stderr: in a terminal, and not under ``--json``
    (elsewhere rich would leave a blank line behind)."""
    console = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=console, transient=True,
                  disable=not (enabled and console.is_terminal)) as progress:
        yield progress


def setup_bars(progress: Progress) -> SetupProgress:
    """A key setup's progress as bars: one per step, counted points and ETA per basis."""
    tasks: dict[str, TaskID] = {}

    def report(step: str, done: int, total: int | None) -> None:
        if step not in tasks:
            for task in progress.tasks:  # the step before has ended
                if task.total is None:
                    progress.update(task.id, total=1, completed=1)
            tasks[step] = progress.add_task(step, total=total)
        progress.update(tasks[step], completed=done)

    return report


def emit(as_json: bool, result: dict[str, Any], lines: list[str]) -> None:
    """``result`` as JSON under ``--json``, else ``lines`` for a person."""
    if as_json:
        click.echo(json.dumps(result, indent=1))
    else:
        console = Console()
        for line in lines:
            console.print(line, highlight=False, soft_wrap=True)
