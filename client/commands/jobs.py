"""Job commands of ``proofq``: submit, status, result, cancel, jobs, view, ``bench batch``
and intake.

They talk to the cluster named by ``PROOFQ_REDIS_URL``.  Without one, ``bench batch`` and
``submit --wait`` start a private cluster for the duration of the command (an embedded
redis-server and one worker: ``--gpu 0`` when CUDA sees a GPU, the CPU otherwise), after
checking the input and the output path, so a refusal does not wait for a cluster to start;
the other commands need a cluster that outlives them.

Exit codes: 0 done, 1 a job failed or was cancelled, 2 bad input or no cluster, 3 the job
has not finished yet (``result`` or ``submit --wait`` ran out of time).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import click
import kombu.exceptions
import redis

from client.api import Client, JobError, JobNotFound
from client.batch import NoWorkers, Outcome, Summary, check_workers, run_batch, unit_of
from client.commands.common import (STDIN, JSON_OPTION, BadInput, one_line, output_path,
                                    read_job_file, reports)
from client.intake import INTAKE_STREAM, Intake, serving_here
from client.local_cluster import Cluster, ClusterError, open_cluster
from client.progress import status_line
from config.settings import SettingsError, get_settings
from snark.errors import InvalidInput
from snark.files import write_atomic
from snark.job_input import InputLimits
from snark.plugins import Delivered
from snark.proof_types import Storage
from snark.registry import DEFAULT_TYPE, names, plugin, plugins, proof_type as proof_type_named
from snark.registry import worker_half
from tasks.application import PRIORITIES
from tasks.jobs import JobState
from tasks.submission import SubmitError

_ERRORS = (SubmitError, JobNotFound, JobError, ClusterError, NoWorkers, SettingsError,
           InvalidInput, OSError, TimeoutError, redis.RedisError,
           kombu.exceptions.OperationalError)


def _one_of(choices: list[str], then: Callable[[str], str] = str) -> Callable:
    """A click callback refusing a value outside ``choices`` in one line (exit 2), not
    click's usage block (None, an option left out without a default, passes)."""
    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        if value not in choices:
            raise BadInput(f"{param.opts[0]}: {value!r} is not one of "
                           f"{', '.join(choices)}")
        return then(value)
    return check


def _type_option(default: str | None, told: str = "") -> Callable:
    return click.option("--type", "proof_type", metavar=f"[{'|'.join(names())}]",
                        default=default, show_default=default is not None,
                        callback=_one_of(names(), lambda name: proof_type_named(name).name),
                        help=f"proof type (groth16: circom's name in 0.1){told}")


TYPE_OPTION = _type_option(DEFAULT_TYPE)
PRIORITY_OPTION = click.option("--priority", metavar=f"[{'|'.join(PRIORITIES)}]",
                               default="normal", show_default=True,
                               callback=_one_of(list(PRIORITIES)),
                               help="queue order among waiting jobs")
KEY_OPTION = click.option("--key", "key_id", default=None, metavar="KEY_ID",
                          help="the key the input is proved under, for the types that "
                               "take one (" + ", ".join(
                                   p.kind.name for p in plugins()
                                   if p.inputs.with_key is not None) + ")")


#: A Redis that does not answer: the error then names the setting that points at it.
_UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, kombu.exceptions.OperationalError)


def one_line_errors(command: Callable) -> Callable:
    """``_ERRORS`` as one line each (exit 2); an unreachable Redis names PROOFQ_REDIS_URL."""
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except _UNREACHABLE as exc:
            raise BadInput(f"{one_line(exc)} ({_which_redis()})") from None

    return reports(*_ERRORS)(wrapper)


def _which_redis() -> str:
    try:
        configured = get_settings().redis_url is not None
    except SettingsError:
        configured = True
    return ("the Redis that PROOFQ_REDIS_URL names: is it running, and reachable from here?"
            if configured else "the private cluster's Redis stopped answering")


class NotFinished(click.ClickException):
    """The job is still queued or running: not an error of the input, so its own code."""

    exit_code = 3


class JobEnded(click.ClickException):
    """The job failed or was cancelled: it has no proof."""

    exit_code = 1


def _proof(client: Client, job_id: str, timeout: float | None,
           check: Callable[[], None] | None = None, *, show: bool = True) -> bytes:
    """The job's result, waiting with a status line (``show``, in a terminal)."""
    try:
        with status_line(client.store.redis, enabled=show) as line:
            return client.result(job_id, timeout=timeout, check=check, on_state=line.job)
    except TimeoutError as exc:
        raise NotFinished(f"{exc}{_unread_queues(client, job_id)}") from None
    except JobError as exc:
        raise JobEnded(str(exc)) from None


def _unread_queues(client: Client, job_id: str) -> str:
    """Why a job still queued may stay so: no worker reads a queue it needs."""
    if client.status(job_id).status != "queued":
        return ""
    try:
        check_workers(client, timeout_s=1.0)
    except NoWorkers as exc:
        return f" ({exc})"
    return ""


def _checked_input(raw: Any, proof_type: str) -> Any:
    """The job input, parsed and checked as the cluster will (a ``ValueError`` if bad)."""
    settings = get_settings()
    kind = proof_type_named(proof_type)
    job_input = kind.parse(raw, InputLimits.of(settings))
    worker_half(kind, Storage.of(settings)).check(job_input)
    return job_input


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
    request = f", request {state.request_id}" if state.request_id else ""
    line = (f"job {state.job_id}: {state.stage} ({state.parts_done}/{state.partitions} "
            f"partitions, {state.priority} priority{request}{timings})")
    return f"{line}: {state.error}" if state.error and state.status != "done" else line


def _show_state(state: JobState, as_json: bool) -> None:
    click.echo(json.dumps(state.to_json()) if as_json else _state_line(state))


def _refuse_keyed_files_without_key(inputs: tuple[str, ...]) -> None:
    """A file only proved under a key (a circom witness) needs ``--key``."""
    for path in inputs:
        head = _head(path)
        for each in plugins():
            why = each.inputs.needs_key(head)
            if why is not None:
                raise BadInput(f"{path}: {why}")


def _head(path: str) -> bytes:
    """A job file's first 200 bytes (stdin's too, kept for the reading after); none where
    it cannot be read (the reading after says why)."""
    if path == STDIN:
        return read_job_file(STDIN)[:200]
    try:
        with open(path, "rb") as fh:
            return fh.read(200)
    except OSError:
        return b""


def _told_type(inputs: tuple[str, ...]) -> str:
    """The proof type of a submit without ``--type``, told from its one file by the types'
    claims (``snark.plugins.InputForms.claim``): the surest claim, the default type where
    none claims it or there are several files."""
    if len(inputs) != 1:
        return DEFAULT_TYPE
    head = _head(inputs[0])
    claims = sorted(((each.inputs.claim(head), each.kind.name == DEFAULT_TYPE, each.kind.name)
                     for each in plugins()), reverse=True)
    return claims[0][2] if claims and claims[0][0] > 0 else DEFAULT_TYPE


def _job_input(proof_type: str, inputs: tuple[str, ...], key_id: str | None) -> Any:
    """The raw input of ``inputs`` as ``proof_type`` takes them: one file's bytes, or the
    type's form of files proved under ``--key``."""
    if key_id is None:
        _refuse_keyed_files_without_key(inputs)
    forms = plugin(proof_type).inputs
    with_key = forms.with_key
    if key_id is not None and with_key is None:
        raise BadInput("--key: only with --type " + " or ".join(
            each.kind.name for each in plugins() if each.inputs.with_key is not None))
    if len(inputs) != 1 and not (key_id is not None and forms.several_files):
        several = [each.kind.name for each in plugins() if each.inputs.several_files]
        told = (f" (several files need --type {' or '.join(several)} --key KEY_ID)"
                if several else "")
        raise BadInput(f"INPUT: one {proof_type} job file, got {len(inputs)}{told}")
    if key_id is None or with_key is None:
        return read_job_file(inputs[0])
    settings = get_settings()
    return with_key(key_id, inputs, read_job_file, InputLimits.of(settings),
                    Storage.of(settings))


def _deliver(proof: bytes, output: str | None, as_json: bool, state: JobState) -> None:
    """The result as its type delivers it (``snark.plugins.InputForms.deliver``), else the
    bytes: written to ``output``, or printed as hex."""
    deliver = plugin(state.proof_type).inputs.deliver
    if deliver is not None:
        delivered = deliver(proof, output)
    else:
        if output is not None:
            write_atomic(Path(output), proof)  # its path was checked before the wait
        delivered = Delivered({"bytes": len(proof), "output": output,
                               "proof": None if output else proof.hex()},
                              proof.hex(), f"{output} ({len(proof)} bytes)")
    if as_json:
        click.echo(json.dumps({**state.to_json(), **delivered.fields}))
    elif output is None:
        click.echo(delivered.text)
    else:
        click.echo(f"{_state_line(state)} → {delivered.written}")


@click.command()
@click.argument("inputs", metavar="INPUT...", nargs=-1, required=True,
                type=click.Path(dir_okay=False))
@_type_option(None, " [default: told from the file: a porep-demo or Filecoin C1, a circom "
                    "job]")
@KEY_OPTION
@PRIORITY_OPTION
@click.option("--job-id", default=None,
              help="idempotency key: resubmitting it returns the same job")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="wait for the proof (0 = for ever) and print or write it")
@click.option("-o", "--output", type=click.Path(), default=None,
              help="with --wait: write the proof here instead of printing hex (circom: a "
                   "directory for proof-<i>.json and public-<i>.json)")
@JSON_OPTION
@one_line_errors
def submit(inputs: tuple[str, ...], proof_type: str | None, key_id: str | None, priority: str,
           job_id: str | None, wait_s: float | None, output: str | None,
           as_json: bool) -> None:
    """Submit a proof job; prints its id (or, with --wait, its proof).

    INPUT is the job's input file: a porep C1, a Filecoin c1.json (--key development for
    proofq's own key of the circuit), or a circom job JSON, each told from the file without
    --type; with --type circom --key KEY_ID, one or more .wtns files, one proof each.
    INPUT - reads the job from stdin.
    It uses the cluster named by PROOFQ_REDIS_URL (redis://host:port/db); without it,
    --wait starts a private cluster for the job, and a plain submit stops with an error.
    Exit codes: 0 submitted (or proved), 1 the job failed, 2 bad input, 3 --wait ran out.
    """
    if output is not None:
        output_path(output)
    proof_type = proof_type or _told_type(inputs)
    job_input = _job_input(proof_type, inputs, key_id)
    if wait_s is not None and get_settings().redis_url is None:
        _checked_input(job_input, proof_type)  # refused before a private cluster starts
    with cluster(may_start=wait_s is not None) as (running, client):
        if wait_s is not None and running.worker is None:
            check_workers(client)  # a wait on a queue nobody reads would never end
        job = client.submit(job_input, priority=priority, job_id=job_id,
                            proof_type=proof_type)
        if wait_s is None:
            click.echo(json.dumps(client.status(job).to_json()) if as_json else job)
            return
        proof = _proof(client, job, wait_s or None, running.check, show=not as_json)
        _deliver(proof, output, as_json, client.status(job))


@click.command()
@click.argument("job_id")
@JSON_OPTION
@one_line_errors
def status(job_id: str, as_json: bool) -> None:
    """Show a job's status.

    It uses the cluster named by PROOFQ_REDIS_URL (redis://host:port/db); without it the
    command stops with an error."""
    with cluster(may_start=False) as (_, client):
        state = client.status(job_id)
    _show_state(state, as_json)


@click.command()
@click.argument("job_id")
@click.option("-o", "--output", type=click.Path(), default=None,
              help="write the proof here instead of printing hex (circom: a directory for "
                   "proof-<i>.json and public-<i>.json)")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=0.0, metavar="SECONDS",
              help="wait up to this long for the job to end (default: do not wait)")
@JSON_OPTION
@one_line_errors
def result(job_id: str, output: str | None, wait_s: float, as_json: bool) -> None:
    """Print (or write) a finished job's proof: porep 192 bytes per partition, circom
    snarkjs's proof.json and public.json per witness.

    It uses the cluster named by PROOFQ_REDIS_URL (redis://host:port/db); without it the
    command stops with an error. Exit codes: 0 the proof, 1 the job failed or was
    cancelled, 2 bad input (or no such job), 3 not finished yet (try again, or --wait).
    """
    if output is not None:
        output_path(output)
    with cluster(may_start=False) as (_, client):
        proof = _proof(client, job_id, wait_s, show=not as_json)
        _deliver(proof, output, as_json, client.status(job_id))


@click.command()
@click.argument("job_id")
@JSON_OPTION
@one_line_errors
def cancel(job_id: str, as_json: bool) -> None:
    """Cancel a job: queued partitions are dropped, running ones stop at their next phase
    (in the compute phase, at its next device call).

    It uses the cluster named by PROOFQ_REDIS_URL (redis://host:port/db); without it the
    command stops with an error."""
    with cluster(may_start=False) as (_, client):
        client.cancel(job_id)
        state = client.status(job_id)
    _show_state(state, as_json)


@click.group()
def bench() -> None:
    """Benchmarks through the job pipeline."""


@bench.command()
@TYPE_OPTION
@click.option("--c1", "c1_path", type=click.Path(), default=None,
              help="C1 to prove (default: seal a fresh sector first)")
@KEY_OPTION
@click.option("--wtns", "witnesses", multiple=True, type=click.Path(dir_okay=False),
              help="circom (with --key): a witness of each job, repeat for a batch per job")
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
def batch(proof_type: str, c1_path: str | None, key_id: str | None, witnesses: tuple[str, ...],
          count: int, in_flight: int, priority: str, sector_size: str, partitions: int,
          challenges: int, as_json: bool) -> None:
    """Prove COUNT copies of one job with at most JOBS in flight, then summarise.

    porep: a C1 (--c1, or a freshly sealed sector); filecoin: --c1 (and --key), or a freshly
    sealed 2 KiB test sector under the development key; circom: --key and --wtns.
    It uses the cluster named by PROOFQ_REDIS_URL; without it, a private one for the run."""
    files = (c1_path,) if c1_path is not None else witnesses
    sample = plugin(proof_type).inputs.sample
    if files:
        job_input: Any = _checked_input(_job_input(proof_type, files, key_id), proof_type)
    elif sample is None:
        raise BadInput(f"bench batch --type {proof_type}: needs its input (--c1, or --key "
                       f"KEY_ID and --wtns FILE)")
    else:
        job_input, made = sample(key_id, sector_size, partitions, challenges)
        if not as_json:
            click.echo(made)
    with cluster(may_start=True) as (running, client), \
            status_line(client.store.redis, enabled=not as_json) as line:
        show: Callable[[Outcome], None] | None = None if as_json else (
            lambda outcome: line.echo(outcome.line(count)))
        outcomes, total_s = run_batch(
            client, job_input, count=count, in_flight=in_flight, priority=priority,
            proof_type=proof_type, on_outcome=show, check=running.check,
            on_poll=lambda ended, pending: line.batch(ended, count, pending))
    summary = Summary.of(outcomes, total_s, unit_of(proof_type))
    if as_json:
        click.echo(json.dumps({"proofs": [o.to_json() for o in outcomes],
                               "summary": summary.to_json()}))
    else:
        for text in summary.lines():
            click.echo(text)
    if summary.failed:
        raise SystemExit(1)


@click.command()
@click.option("--reclaim-after", "reclaim_s", type=click.FloatRange(min=0), default=60.0,
              show_default=True, help="claim requests left unacknowledged this long (seconds)")
@click.option("--check", "check_only", is_flag=True,
              help="exit 0 if an intake of this host is serving (a healthcheck), else 1")
@one_line_errors
def intake(reclaim_s: float, check_only: bool) -> None:
    """Serve the proofq:intake stream for non-Python producers until Ctrl-C.

    It uses the cluster named by PROOFQ_REDIS_URL (redis://host:port/db); without it the
    command stops with an error."""
    with cluster(may_start=False) as (_, client):
        if check_only:
            serving = serving_here(client.store.redis, within_s=10.0)
            click.echo(", ".join(serving) or "no intake of this host is serving", err=True)
            raise SystemExit(0 if serving else 1)
        consumer = Intake(client, reclaim_idle_s=reclaim_s)
        click.echo(f"intake consumer {consumer.name} reading {INTAKE_STREAM}", err=True)
        try:
            consumer.run(should_stop=lambda: False)
        except KeyboardInterrupt:
            click.echo("intake stopped", err=True)


@click.command("jobs")
@click.option("-n", "--count", type=click.IntRange(min=1), default=20, show_default=True,
              help="how many of the newest jobs")
@JSON_OPTION
@one_line_errors
def jobs_list(count: int, as_json: bool) -> None:
    """List the newest jobs and their states (ended ones until their state expires).

    It uses the cluster named by PROOFQ_REDIS_URL (redis://host:port/db); without it the
    command stops with an error."""
    with cluster(may_start=False) as (_, client):
        states = client.store.recent(count)
    if as_json:
        click.echo(json.dumps([state.to_json() for state in states]))
        return
    now = time.time()
    for state in states:
        age = _age(now - state.created)
        error = f"  {state.error}" if state.error and state.status != "done" else ""
        click.echo(f"{state.job_id}  {state.proof_type:<10} {state.stage:<10} "
                   f"{state.parts_done:>3}/{state.partitions:<3} {state.priority:<6} "
                   f"{age:>8} ago{error}")
    if not states:
        click.echo("no jobs", err=True)


@click.command("view")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8377, show_default=True,
              help="port to serve the page on (0: any free one)")
@click.option("--address", default="127.0.0.1", show_default=True,
              help="address to serve on (the page shows every job: keep it on this host "
                   "unless the network is yours)")
@one_line_errors
def view(port: int, address: str) -> None:
    """Serve a page of the cluster's jobs until Ctrl-C: partitions and their phases on a
    timeline, lock waits, GPU busy over time, failures with their reasons.

    It reads the cluster named by PROOFQ_REDIS_URL (redis://host:port/db) and changes
    nothing there; without it the command stops with an error."""
    from client.view.server import serve

    with cluster(may_start=False) as (_, client):
        client.store.redis.ping()  # an unreachable Redis is one line now, not on each page
        server = serve(client.store, address, port)
        host, bound = server.socket.getsockname()[:2]
        click.echo(f"job view on http://{host}:{bound}/ (Ctrl-C stops)", err=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("job view stopped", err=True)
        finally:
            server.server_close()


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{max(seconds, 0):.0f} s"


COMMANDS: list[click.Command] = [submit, status, result, cancel, bench, intake, jobs_list,
                                 view]
