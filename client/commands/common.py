"""What every ``proofq`` subcommand shares: one-line errors with exit code 2, ``--json``,
bounded reads of input files and output paths checked before the work."""

from __future__ import annotations

import functools
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import click

from config.settings import get_settings

JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="print JSON for scripts")


def plural(count: int, noun: str) -> str:
    """``1 partition``, ``2 partitions``: a count and its noun, for output lines."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


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


_CHUNK = 1 << 20


#: The input path that means stdin, as in most Unix tools.
STDIN = "-"
_stdin: list[bytes] = []  # stdin's bytes once read: a command may read its input twice


def read_input(path: str, limit: int, why: str) -> bytes:
    """A file's bytes (``-``: stdin's, kept for a second reading), refused once more than
    ``limit`` are read (``/dev/zero`` ends too); ``why`` names the limit."""
    if path != STDIN:
        with open(path, "rb") as fh:
            return _read_bounded(fh, path, limit, why)
    if not _stdin:
        _stdin.append(_read_bounded(sys.stdin.buffer, "stdin", limit, why))
    if len(_stdin[0]) > limit:
        raise BadInput(f"stdin: more than {limit} bytes ({why})")
    return _stdin[0]


def _read_bounded(fh: BinaryIO, name: str, limit: int, why: str) -> bytes:
    chunks, size = [], 0
    while chunk := fh.read(min(_CHUNK, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise BadInput(f"{name}: more than {limit} bytes ({why})")
    return b"".join(chunks)


def output_path(path: str) -> Path:
    """Check that ``path`` can be written before the work rather than after it."""
    if not path:
        raise BadInput("output path is empty")
    target = Path(path)
    if target.is_dir():
        raise BadInput(f"{path}: is a directory")
    if not target.parent.is_dir():
        raise BadInput(f"{path}: directory {target.parent} does not exist")
    try:  # the outputs are written through a temporary sibling: try making one
        with tempfile.NamedTemporaryFile(prefix=f".{target.name}.", dir=target.parent):
            pass
    except OSError as exc:
        raise BadInput(f"{path}: cannot write in {target.parent} ({exc.strerror})") from None
    return target


def read_job_file(path: str) -> bytes:
    """A job input file's bytes (a C1, …), read no further than ``max_input_bytes``."""
    return read_input(path, get_settings().max_input_bytes,
                      "max_input_bytes, PROOFQ_MAX_INPUT_BYTES")
