"""The live status line of a command that waits (``submit --wait``, ``result --wait``,
``bench batch``): each job's stage, its partitions done of all, what the unfinished ones
are doing now (from ``proofq:events``) and the time waited.

It is drawn on stderr in a terminal only, and cleared when the wait ends, so a pipe or a
``--json`` reader sees exactly what it saw before.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import click
import redis
from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner

from config.redis_keys import RedisKeys
from config.settings import get_settings
from tasks.jobs import JobState
from workers.phase_events import current_phases, recent_events

#: Events read for the phases (the newest), and how often: a few hundred cover every
#: partition in flight on a cluster of tens of GPUs; 2 reads a second cost Redis little.
_EVENT_WINDOW = 500
_EVENTS_EVERY_S = 0.5


def job_line(state: JobState, phases: dict[int, str], waited_s: float) -> str:
    """``job ID: proving 3/10 partitions · compute 2, mem_wait 1 · 12s``."""
    head = f"job {state.job_id}: {state.stage}"
    if state.stage == "setup":
        return f"{head}: making its proving key · {waited_s:.0f}s"
    head += f" {state.parts_done}/{state.partitions} partitions"
    now = Counter(phases.values())
    doing = ", ".join(f"{phase} {n}" for phase, n in sorted(now.items()))
    return f"{head}{' · ' + doing if doing else ''} · {waited_s:.0f}s"


class StatusLine:
    """One transient line, redrawn as states arrive; does nothing outside a terminal."""

    def __init__(self, client: redis.Redis, *, enabled: bool = True,
                 keys: RedisKeys | None = None) -> None:
        self.redis = client
        self.events_stream = (keys or RedisKeys.of(get_settings())).events
        self.console = Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self.started = time.monotonic()
        self._events: list = []
        self._events_read = float("-inf")
        self._live: Live | None = None

    def phases(self, job_id: str) -> dict[int, str]:
        """The job's unfinished partitions' phases (the events read every ``_EVENTS_EVERY_S``)."""
        if time.monotonic() - self._events_read >= _EVENTS_EVERY_S:
            self._events = recent_events(self.redis, _EVENT_WINDOW, self.events_stream)
            self._events_read = time.monotonic()
        return current_phases(self._events, job_id)

    def job(self, state: JobState) -> None:
        """Show a job's state (``Client.wait``'s ``on_state``)."""
        if self.enabled and not state.terminal:
            self._show(job_line(state, self.phases(state.job_id),
                                time.monotonic() - self.started))

    def batch(self, done: int, total: int, pending: list[JobState]) -> None:
        """Show a batch: jobs ended of all, and its oldest unfinished job's state."""
        if self.enabled:
            oldest = "" if not pending else " · " + job_line(
                pending[0], self.phases(pending[0].job_id), time.monotonic() - self.started)
            self._show(f"{done}/{total} jobs ended, {len(pending)} in flight{oldest}")

    def echo(self, line: str) -> None:
        """A line of the command's output (stdout): drawn above the status line when both
        share the terminal, so neither garbles the other."""
        if self._live is not None and sys.stdout.isatty():
            self.console.print(line, highlight=False, soft_wrap=True)
        else:
            click.echo(line)

    def _show(self, text: str) -> None:
        if self._live is None:
            self._spinner = Spinner("dots", text)
            # Not redirecting stdout: the command's own output stays on stdout.
            self._live = Live(self._spinner, console=self.console, transient=True,
                              redirect_stdout=False, redirect_stderr=False,
                              refresh_per_second=4)
            self._live.start()
        else:
            self._spinner.update(text=text)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


@contextmanager
def status_line(client: redis.Redis, *, enabled: bool = True) -> Iterator[StatusLine]:
    line = StatusLine(client, enabled=enabled)
    try:
        yield line
    finally:
        line.close()
