"""Job commands of ``proofq``: submit, status, result, cancel, ``bench batch`` and intake.

They talk to the cluster named by ``PROOFQ_REDIS_URL``.  Without one, ``bench batch`` and
``submit --wait`` start a private cluster for the duration of the command (an embedded
redis-server and one worker: ``--gpu 0`` when CUDA sees a GPU, the CPU otherwise); the
other commands need a cluster that outlives them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import click
import kombu.exceptions
import redis

from client.api import Client, JobError, JobNotFound
from client.batch import NoWorkers, Outcome, Summary, run_batch
from client.commands.common import JSON_OPTION, BadInput, reports
from client.commands.local import write_atomic
from client.intake import INTAKE_STREAM, Intake
from client.local_cluster import Cluster, ClusterError, open_cluster
from config.settings import SettingsError, get_settings
from snark.porep.c1 import C1Error, parse_size
from snark.porep.seal import seal
from tasks.application import PRIORITIES
from tasks.jobs import JobState
from tasks.proof_types import PROOF_TYPES
from tasks.submission import SubmitError

_ERRORS = (SubmitError, JobNotFound, JobError, ClusterError, NoWorkers, SettingsError, C1Error,
           OSError, TimeoutError, redis.RedisError, kombu.exceptions.OperationalError)

TYPE_OPTION = click.option("--type", "proof_type", type=click.Choice(sorted(PROOF_TYPES)),
                           default="porep", show_default=True, help="proof type")
PRIORITY_OPTION = click.option("--priority", type=click.Choice(list(PRIORITIES)),
                               default="normal", show_default=True)


one_line_errors = reports(*_ERRORS)


@contextmanager
def cluster(*, may_start: bool) -> Iterator[tuple[Cluster, Client]]:
    """The configured cluster, or a private one when ``may_start``, and a client of it."""
    settings = get_settings()
    if settings.redis_url is None and not may_start:
        raise BadInput("PROOFQ_REDIS_URL is not set: this command needs a running cluster "
                       "(proofq bench batch and proofq submit --wait start a private one)")
    with open_cluster(settings) as running, Client(running.url, settings) as client:
        yield running, client


def _state_line(state: JobState) -> str:
    timings = "".join(f", {name} {seconds * 1000:.0f} ms"
                      for name, seconds in (("queue", state.queue_s), ("prove", state.prove_s))
                      if seconds is not None)
    line = (f"job {state.job_id}: {state.status} ({state.parts_done}/{state.partitions} "
            f"partitions, {state.priority} priority{timings})")
    return f"{line}: {state.error}" if state.error and state.status != "done" else line


def _show_state(state: JobState, as_json: bool) -> None:
    click.echo(json.dumps(state.to_json()) if as_json else _state_line(state))


def _deliver(proof: bytes, output: str | None, as_json: bool, state: JobState) -> None:
    if output is not None:
        write_atomic(Path(output), proof)
    if as_json:
        click.echo(json.dumps({**state.to_json(), "bytes": len(proof), "output": output,
                               "proof": None if output else proof.hex()}))
    elif output is None:
        click.echo(proof.hex())
    else:
        click.echo(f"{_state_line(state)} → {output} ({len(proof)} bytes)")


@click.command()
@click.argument("c1_path", metavar="C1_FILE", type=click.Path(dir_okay=False))
@TYPE_OPTION
@PRIORITY_OPTION
@click.option("--job-id", default=None,
              help="idempotency key: resubmitting it returns the same job")
@click.option("--wait", "wait_s", type=float, default=None, metavar="SECONDS",
              help="wait for the proof (0 = for ever) and print or write it")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="with --wait: write the proof here instead of printing hex")
@JSON_OPTION
@one_line_errors
def submit(c1_path: str, proof_type: str, priority: str, job_id: str | None,
           wait_s: float | None, output: str | None, as_json: bool) -> None:
    """Submit a proof job; prints its id (or, with --wait, its proof)."""
    raw = Path(c1_path).read_bytes()
    with cluster(may_start=wait_s is not None) as (running, client):
        job = client.submit(raw, priority=priority, job_id=job_id, proof_type=proof_type)
        if wait_s is None:
            click.echo(json.dumps(client.status(job).to_json()) if as_json else job)
            return
        proof = client.result(job, timeout=wait_s or None, check=running.check)
        _deliver(proof, output, as_json, client.status(job))


@click.command()
@click.argument("job_id")
@JSON_OPTION
@one_line_errors
def status(job_id: str, as_json: bool) -> None:
    """Show a job's status."""
    with cluster(may_start=False) as (_, client):
        state = client.status(job_id)
    _show_state(state, as_json)


@click.command()
@click.argument("job_id")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="write the proof here instead of printing hex")
@click.option("--wait", "wait_s", type=float, default=0.0, metavar="SECONDS",
              help="wait up to this long for the job to end")
@JSON_OPTION
@one_line_errors
def result(job_id: str, output: str | None, wait_s: float, as_json: bool) -> None:
    """Print (or write) a finished job's proof: 192 bytes per partition."""
    with cluster(may_start=False) as (_, client):
        proof = client.result(job_id, timeout=wait_s)
        _deliver(proof, output, as_json, client.status(job_id))


@click.command()
@click.argument("job_id")
@JSON_OPTION
@one_line_errors
def cancel(job_id: str, as_json: bool) -> None:
    """Cancel a job: queued partitions are dropped, running ones stop at their next phase."""
    with cluster(may_start=False) as (_, client):
        client.cancel(job_id)
        state = client.status(job_id)
    _show_state(state, as_json)


@click.group()
def bench() -> None:
    """Benchmarks through the job pipeline."""


@bench.command()
@TYPE_OPTION
@click.option("--c1", "c1_path", type=click.Path(dir_okay=False), default=None,
              help="C1 to prove (default: seal a fresh sector first)")
@click.option("-c", "--count", type=click.IntRange(min=1), default=1, show_default=True,
              help="proofs to run")
@click.option("-j", "--jobs", "in_flight", type=click.IntRange(min=1), default=1,
              show_default=True, help="most proofs in flight at once")
@PRIORITY_OPTION
@click.option("--sector-size", default="2KiB", show_default=True,
              help="without --c1: sector size to seal")
@click.option("--partitions", type=click.IntRange(min=1), default=2, show_default=True,
              help="without --c1: partitions of the sealed sector")
@click.option("--challenges", type=click.IntRange(min=1), default=2, show_default=True,
              help="without --c1: challenges per partition (K)")
@JSON_OPTION
@one_line_errors
def batch(proof_type: str, c1_path: str | None, count: int, in_flight: int, priority: str,
          sector_size: str, partitions: int, challenges: int, as_json: bool) -> None:
    """Prove COUNT copies of one C1 with at most JOBS in flight, then summarise."""
    if c1_path is not None:
        job_input: Any = Path(c1_path).read_bytes()
    else:
        job_input = seal(parse_size(sector_size), partitions, challenges)
        if not as_json:
            click.echo(f"sealed a {sector_size} sector: {job_input.circuit_name}, "
                       f"{partitions} partitions")
    show: Callable[[Outcome], None] | None = None if as_json else (
        lambda outcome: click.echo(outcome.line(count)))
    with cluster(may_start=True) as (running, client):
        outcomes, total_s = run_batch(client, job_input, count=count, in_flight=in_flight,
                                      priority=priority, proof_type=proof_type,
                                      on_outcome=show, check=running.check)
    summary = Summary.of(outcomes, total_s)
    if as_json:
        click.echo(json.dumps({"proofs": [o.to_json() for o in outcomes],
                               "summary": summary.to_json()}))
    else:
        for line in summary.lines():
            click.echo(line)
    if summary.failed:
        raise SystemExit(1)


@click.command()
@click.option("--reclaim-after", "reclaim_s", type=click.FloatRange(min=0), default=60.0,
              show_default=True, help="claim requests left unacknowledged this long (seconds)")
@one_line_errors
def intake(reclaim_s: float) -> None:
    """Serve the proofq:intake stream for non-Python producers until Ctrl-C."""
    with cluster(may_start=False) as (_, client):
        consumer = Intake(client, reclaim_idle_s=reclaim_s)
        click.echo(f"intake consumer {consumer.name} reading {INTAKE_STREAM}", err=True)
        try:
            consumer.run(should_stop=lambda: False)
        except KeyboardInterrupt:
            click.echo("intake stopped", err=True)


COMMANDS: list[click.Command] = [submit, status, result, cancel, bench, intake]
