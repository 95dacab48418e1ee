"""What every ``proofq`` subcommand shares: one-line errors with exit code 2, ``--json``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="print JSON for scripts")


class BadInput(click.ClickException):
    exit_code = 2


def one_line(exc: BaseException) -> str:
    """The error as one line; an OSError names its file."""
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    return " ".join(str(exc).split())


def reports(*errors: type[BaseException]) -> Callable[[Callable], Callable]:
    """A decorator turning ``errors`` into ``BadInput``: one line, exit 2, no traceback."""

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except errors as exc:
                raise BadInput(one_line(exc)) from None

        return wrapper

    return decorate
