"""The job commands as users run them: ``proofq …`` subprocesses, real Redis, real workers."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess
from config.settings import load_settings
from snark.porep.prove import load_or_setup_key, load_verifying_key, verify_c1
from snark.porep.seal import seal

pytestmark = pytest.mark.slow

K = 1
PROOFQ = str(Path(sys.executable).parent / "proofq")  # the installed console script


@pytest.fixture(scope="module")
def params_dir(tmp_path_factory):
    params = tmp_path_factory.mktemp("params")
    load_or_setup_key(seal(2048, 1, K), params)
    return params


def proofq(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    return subprocess.run([PROOFQ, *args], capture_output=True,
                          text=True, env={**base, **env}, timeout=timeout)


def test_bench_batch_runs_on_a_private_cluster_without_configuration(params_dir):
    """The README command: no Redis configured, so it starts its own and stops it."""
    env = {"PROOFQ_PARAMS_DIR": str(params_dir), "PROOFQ_BACKEND": "cpu"}
    run = proofq("bench", "batch", "--type", "porep-demo", "-c", "2", "-j", "2",
                 "--challenges", str(K), env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert sum(bool(re.fullmatch(r"\[[12]/2\] OK — [\d.]+s \(prove=\d+ ms, queue=\d+ ms\)", line))
               for line in lines) == 2, run.stdout
    summary = lines[lines.index("=== Batch Summary ===") + 1:]
    assert "completed: 2" in summary and "failed: 0" in summary
    assert any(line.startswith("throughput, whole batch: ") and "jobs/min" in line
               and "partition proofs/min" in line for line in summary)
    assert any(line.startswith("throughput, steady state") and "jobs/min" in line
               for line in summary)


@pytest.fixture(scope="module")
def cluster(params_dir):
    """A Redis and one CPU worker started as the README says (no ``-l``): env and worker."""
    with EmbeddedRedis() as server:
        # One CPU "device" for the host, so a test can park partitions by holding its lock.
        env = {"PROOFQ_REDIS_URL": server.url, "PROOFQ_PARAMS_DIR": str(params_dir),
               "PROOFQ_BACKEND": "cpu", "PROOFQ_CPU_DEVICES": "1"}
        command = [sys.executable, "-m", "celery", "-A", "tasks", "worker", "-c", "1",
                   "--without-mingle", "--without-gossip"]
        worker = WorkerProcess(server.url, command, log_dir=params_dir, env=env).start()
        try:
            from tasks.application import create_app
            app = create_app(load_settings(redis_url=server.url))
            worker.wait_ready(app, 60)
            yield env, worker
        finally:
            worker.stop(graceful=False)


@pytest.fixture()
def cluster_env(cluster):
    return cluster[0]


@pytest.fixture()
def c1_file(tmp_path):
    c1 = seal(2048, 2, K)
    path = tmp_path / "c1.json"
    path.write_text(c1.to_json())
    return c1, path


def test_submit_status_result_on_a_cluster(cluster_env, c1_file, tmp_path, params_dir):
    c1, path = c1_file
    run = proofq("submit", str(path), "--priority", "high", "--job-id", "cli-job-1",
                 env=cluster_env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "cli-job-1"
    out = tmp_path / "proof.bin"
    run = proofq("result", "cli-job-1", "--wait", "300", "-o", str(out), env=cluster_env)
    assert run.returncode == 0, run.stderr
    assert verify_c1(c1, load_verifying_key(c1, params_dir), out.read_bytes())
    run = proofq("status", "cli-job-1", "--json", env=cluster_env)
    state = json.loads(run.stdout)
    assert (state["status"], state["parts_done"], state["priority"]) == ("done", 2, "high")
    run = proofq("result", "cli-job-1", env=cluster_env)
    assert bytes.fromhex(run.stdout.strip()) == out.read_bytes()


def test_cancel_and_bad_input_are_one_line_errors(cluster_env, c1_file, tmp_path):
    _, path = c1_file
    bad = tmp_path / "bad.json"
    bad.write_text(path.read_text().replace('"sector_size":2048', '"sector_size":2047'))
    run = proofq("submit", str(bad), env=cluster_env)
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("Error: sector_size: 2047 is not a power of two")
    run = proofq("status", "no-such-job", env=cluster_env)
    assert run.returncode == 2 and "no-such-job: no such job" in run.stderr
    job = proofq("submit", str(path), "--priority", "low", env=cluster_env).stdout.strip()
    run = proofq("cancel", job, "--json", env=cluster_env)
    assert json.loads(run.stdout)["status"] in ("cancelled", "done")
    run = proofq("status", job, env=cluster_env)
    assert run.returncode == 0


def test_bench_batch_on_a_cluster_with_a_c1_file(cluster_env, c1_file):
    _, path = c1_file
    run = proofq("bench", "batch", "--c1", str(path), "-c", "3", "-j", "2", "--json",
                 env=cluster_env)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["summary"]["completed"] == 3 and report["summary"]["failed"] == 0
    assert sorted(p["index"] for p in report["proofs"]) == [1, 2, 3]


def test_commands_that_need_a_cluster_say_so():
    run = proofq("status", "some-job", env={})
    assert run.returncode == 2
    assert "PROOFQ_REDIS_URL is not set" in run.stderr
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"redis://127.0.0.1:{closed.getsockname()[1]}/0"  # nothing listens there
    run = proofq("status", "some-job", env={"PROOFQ_REDIS_URL": url})
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "connecting to 127.0.0.1" in line


def _interruptible() -> None:
    """The child's Ctrl-C as a terminal's: a shell's background job (a CI script run with
    ``&``) starts with SIGINT ignored, and Python then never turns it into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _endless_bench(params_dir, tmp_dir: Path) -> subprocess.Popen:
    """A private-cluster batch that is still running when the test acts on it; its
    temporary folders go to ``tmp_dir``."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")},
           "PROOFQ_PARAMS_DIR": str(params_dir), "PROOFQ_BACKEND": "cpu",
           "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp_dir)}
    bench = subprocess.Popen([PROOFQ, "bench", "batch", "-c", "1000", "-j", "2",
                              "--challenges", str(K)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible)
    try:
        assert " OK — " in bench.stdout.readline() + bench.stdout.readline()
    except BaseException:
        _stop(bench)
        raise
    return bench


def _stop(bench: subprocess.Popen) -> None:
    """After a failed check: SIGTERM (which stops the private cluster too), then SIGKILL."""
    if bench.poll() is None:
        bench.terminate()
        try:
            bench.communicate(timeout=_DEADLINE_S)
        except subprocess.TimeoutExpired:
            bench.kill()


#: Generous: on a loaded 2-core machine a stop (SIGQUIT, 2 s, SIGKILL, Redis) can take long.
_DEADLINE_S = 300


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 1), (signal.SIGTERM, 128 + 15),
                                          (signal.SIGHUP, 128 + 1)],
                         ids=["ctrl-c", "sigterm", "sighup"])
def test_a_signal_stops_the_private_cluster(params_dir, tmp_path, signum, code):
    """Ctrl-C, ``timeout``'s SIGTERM and a closed terminal's SIGHUP leave nothing behind."""
    bench = _endless_bench(params_dir, tmp_path)
    try:
        children = _children(bench.pid)
        assert len(children) == 2  # redis-server and the celery worker
        pool = [pid for child in children for pid in _children(child)]
        assert len(pool) == 2  # the worker's pool processes (workers_per_gpu)
        assert sorted(p.name.split("-")[1] for p in tmp_path.glob("proofq-*")) == ["local",
                                                                                   "redis"]
        bench.send_signal(signum)
        bench.communicate(timeout=_DEADLINE_S)
    finally:
        _stop(bench)
    assert bench.returncode == code
    _wait_gone([*children, *pool])
    assert list(tmp_path.glob("proofq-*")) == []  # no /tmp/proofq-* folder left


def test_private_cluster_gives_up_when_its_worker_dies_and_leaves_nothing_behind(params_dir,
                                                                                  tmp_path):
    bench = _endless_bench(params_dir, tmp_path)
    try:
        children = _children(bench.pid)
        [worker] = [pid for pid, command in children.items() if "celery" in command]
        os.kill(worker, signal.SIGKILL)
        _, stderr = bench.communicate(timeout=_DEADLINE_S)
    finally:
        _stop(bench)
    assert bench.returncode == 2
    assert "Error: the private worker exited" in stderr
    _wait_gone(children)
    assert list(tmp_path.glob("proofq-*")) == []


def _wait_gone(pids) -> None:
    """Poll until no process of ``pids`` runs (a zombie waiting for its reaper has ended)."""
    deadline = time.monotonic() + _DEADLINE_S
    while running := [pid for pid in pids if _running(pid)]:
        assert time.monotonic() < deadline, f"still running: {running}"
        time.sleep(0.2)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _children(pid: int) -> dict[int, str]:
    """Direct children of ``pid`` and their command lines."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found[int(stat.parent.name)] = (stat.parent / "cmdline").read_text()
        except (OSError, IndexError):
            continue
    return found


def test_result_of_an_unfinished_job_exits_3(c1_file, redis_url):
    """A job that is stored but never handed to a worker stays queued: 'not finished yet'."""
    import redis as redis_client

    from snark.job_input import InputLimits
    from tasks.jobs import JobStore
    from tasks.submission import accept

    c1, _ = c1_file
    store = JobStore(redis_client.Redis.from_url(redis_url), ttl_s=600, results_maxlen=10)
    job = accept(store, c1, limits=InputLimits(1 << 20, 1 << 20)).job_id
    env = {"PROOFQ_REDIS_URL": redis_url}
    for wait in ([], ["--wait", "0.5"]):
        run = proofq("result", job, *wait, env=env)
        assert run.returncode == 3, run.stderr
        assert run.stderr.strip().splitlines() == [
            f"Error: job {job}: still queued after {float(wait[1]) if wait else 0.0}s "
            f"(no worker answers on {redis_url}: start one (celery -A tasks worker --gpu N), "
            f"or the jobs wait for ever)"]
    assert "3 not finished yet" in " ".join(proofq("result", "--help", env=env).stdout.split())


def test_a_malformed_redis_url_stores_nothing(c1_file, redis_url):
    """``/abc`` is no database number: refused at start, before a job could be stored."""
    import redis as redis_client

    _, path = c1_file
    run = proofq("submit", str(path), env={"PROOFQ_REDIS_URL": redis_url.rsplit("/", 1)[0]
                                           + "/abc"})
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("Error: PROOFQ_REDIS_URL: ") and "'abc' is not a number" in line
    assert redis_client.Redis.from_url(redis_url).keys("proofq:*") == []


@pytest.mark.parametrize("command", [["submit", "--wait", "0"], ["bench", "batch", "--c1"]])
def test_bad_input_is_refused_before_a_private_cluster_starts(c1_file, tmp_path, command):
    """With the backend forced to 'gpu' on a machine without one, starting the private
    cluster would fail; the input's error must come first."""
    _, path = c1_file
    bad = tmp_path / "bad.json"
    bad.write_text(path.read_text().replace('"sector_size":2048', '"sector_size":2047'))
    run = proofq(*command, str(bad), env={"PROOFQ_BACKEND": "gpu"})
    assert run.returncode == 2
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("Error: sector_size: 2047 is not a power of two"), line
    if command[0] == "submit":
        run = proofq(*command, str(path), "-o", str(tmp_path), env={"PROOFQ_BACKEND": "gpu"})
        assert run.returncode == 2
        assert run.stderr.strip().splitlines() == [f"Error: {tmp_path}: is a directory"]


def test_bench_batch_without_a_worker_fails_at_once_naming_the_cluster(c1_file):
    """A configured Redis that no worker reads: one line, exit 2, no job left waiting."""
    _, path = c1_file
    with EmbeddedRedis() as server:
        run = proofq("bench", "batch", "--c1", str(path), "-c", "2",
                     env={"PROOFQ_REDIS_URL": server.url}, timeout=120)
        assert run.returncode == 2, run.stdout + run.stderr
        [line] = run.stderr.strip().splitlines()
        assert line == (f"Error: no worker answers on {server.url}: start one "
                        "(celery -A tasks worker --gpu N), or the jobs wait for ever")
        assert not redis.Redis.from_url(server.url).keys("proofq:job:*")


def test_submit_wait_into_a_queue_no_worker_reads_is_refused_before_submitting(c1_file):
    """Before: it waited its whole time, then said 'still queued'."""
    _, path = c1_file
    with EmbeddedRedis() as server:
        run = proofq("submit", str(path), "--wait", "600", env={"PROOFQ_REDIS_URL": server.url},
                     timeout=120)
        assert run.returncode == 2, run.stdout + run.stderr
        [line] = run.stderr.strip().splitlines()
        assert line.startswith(f"Error: no worker answers on {server.url}")
        assert not redis.Redis.from_url(server.url).keys("proofq:job:*")


def test_waiting_shows_a_status_line_with_partitions_and_phase_in_a_terminal(cluster_env,
                                                                           c1_file):
    """In a terminal, ``submit --wait`` draws its progress on stderr (before: silence until
    the end); the proof still goes to stdout, a pipe here, untouched by the line.  The
    partitions are parked in compute_wait (the CPU device's compute lock held here) until
    the line says so."""
    import pty

    _, path = c1_file
    leader, follower = pty.openpty()
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    screen = _Screen(leader)
    held, heartbeat = _park_compute(cluster_env["PROOFQ_REDIS_URL"])
    try:
        run = subprocess.Popen([PROOFQ, "submit", str(path), "--wait", "300"],
                               stdout=subprocess.PIPE, stderr=follower,
                               env={**base, **cluster_env, "COLUMNS": "200"})
        os.close(follower)
        deadline = time.monotonic() + 300
        while not re.search(r"proving 0/2 partitions · compute_wait 1 · \d+s", screen.text()):
            assert time.monotonic() < deadline and run.poll() is None, screen.text()
            time.sleep(0.2)
    finally:
        held.release()
        heartbeat.close()
    out, _ = run.communicate(timeout=300)
    screen.close()
    assert run.returncode == 0, screen.text()
    assert len(bytes.fromhex(out.decode().strip())) == 2 * 192


class _Screen:
    """What a terminal shows on a pty's other side, read by a thread, escapes removed."""

    def __init__(self, fd: int) -> None:
        self.fd, self.chunks = fd, []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the other side closed
                return
            if not chunk:
                return
            self.chunks.append(chunk)

    def text(self) -> str:
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(self.chunks).decode(errors="replace"))

    def close(self) -> None:
        self.thread.join(timeout=10)
        os.close(self.fd)


def _park_compute(url: str) -> tuple:
    """Hold the CPU device's compute lock: partitions wait in compute_wait."""
    from workers.gpu_binding import host_name
    from workers.heartbeat import Heartbeat
    from workers.locks import GpuId, GpuLock

    heartbeat = Heartbeat(1.0)
    lock = GpuLock(redis.Redis.from_url(url), GpuId(host_name(), "cpu.0"), "compute",
                   lease_s=120, heartbeat=heartbeat)
    return lock.acquire("test"), heartbeat


def test_jobs_lists_the_newest_jobs_and_their_states(cluster_env, c1_file):
    _, path = c1_file
    first = proofq("submit", str(path), "--wait", "300", "--json", env=cluster_env)
    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout)["job"]
    queued = proofq("submit", str(path), "--priority", "low", env=cluster_env).stdout.strip()
    listed = json.loads(proofq("jobs", "--json", "-n", "2", env=cluster_env).stdout)
    assert [j["job"] for j in listed] == [queued, done]
    assert listed[1]["status"] == "done" and listed[1]["parts_done"] == 2
    lines = proofq("jobs", env=cluster_env).stdout.splitlines()
    assert re.match(rf"{done}\s+porep-demo\s+done\s+2/2\s+normal\s+\d+ s ago$", lines[1]), lines
    proofq("result", queued, "--wait", "300", env=cluster_env)


def test_a_job_whose_key_is_being_made_shows_stage_setup(cluster_env, tmp_path):
    """Before: 'queued (0/1 partitions)' for the whole setup (53 s for a small circuit).
    The circuit's setup lock is held here, so the job waits in setup as long as the test
    looks; then its worker makes the key and proves."""
    from snark.job_input import InputLimits
    from snark.registry import proof_type

    c1 = seal(2048, 1, K + 1)  # a circuit the params directory has no key for
    path = tmp_path / "new-circuit.json"
    path.write_text(c1.to_json())
    porep = proof_type("porep-demo")
    name = porep.key_name(porep.parse(c1.to_json(), InputLimits(1 << 24, 1 << 24)))
    url = cluster_env["PROOFQ_REDIS_URL"]
    lock = redis.Redis.from_url(url).lock(f"proofq:setup:{name}", timeout=300)
    assert lock.acquire(blocking=False)
    try:
        job = proofq("submit", str(path), env=cluster_env).stdout.strip()
        deadline = time.monotonic() + 300
        while (state := json.loads(proofq("status", job, "--json", env=cluster_env).stdout)
               )["stage"] != "setup":
            assert time.monotonic() < deadline and state["status"] == "queued", state
        assert proofq("status", job, env=cluster_env).stdout.startswith(
            f"job {job}: setup (0/1 partitions")
    finally:
        lock.release()
    run = proofq("result", job, "--wait", "300", "-o", str(tmp_path / "proof.bin"),
                 env=cluster_env)
    assert run.returncode == 0, run.stderr
    state = json.loads(proofq("status", job, "--json", env=cluster_env).stdout)
    assert (state["stage"], state["setup"]) == ("done", None)


def test_an_unknown_key_fails_the_job_with_one_log_line(cluster, tmp_path):
    """A key this worker does not have is the worker's fault, not the user's: given back,
    and with no other worker to serve it the job fails saying so; one log line, no
    traceback."""
    env, worker = cluster
    key = os.urandom(16).hex()
    wtns = tmp_path / "w.wtns"
    wtns.write_bytes(_wtns([1, 7, 49]))
    run = proofq("submit", "--type", "circom", "--key", key, str(wtns), "--wait", "300",
                 env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"key {key}: not in" in run.stderr and "proofq keys add" in run.stderr
    log = worker.log_path.read_text()
    lines = [entry for entry in log.splitlines() if key in entry and "WARNING" in entry]
    assert len(lines) == 1, lines
    assert "this worker cannot serve it (setup: KeyFileError: key" in lines[0]
    assert lines[0].endswith("the job is failed")
    assert "Traceback" not in log, log


def _wtns(values: list[int]) -> bytes:
    from tests.test_circom_type import wtns_bytes

    return wtns_bytes(values)


def test_a_worker_started_as_the_readme_says_logs_its_work(cluster, cluster_env, c1_file):
    """No ``-l INFO`` on its command line, yet the worker says what it does."""
    _, worker = cluster
    _, path = c1_file
    job = proofq("submit", str(path), "--wait", "300", "--json", env=cluster_env)
    assert job.returncode == 0, job.stderr
    assert "-l" not in worker.command
    log = worker.log_path.read_text()
    assert re.search(r"INFO/[\w-]+\] Task proofq.prove_partition\[[\w-]+\] succeeded", log), log


def test_witness_files_without_a_key_say_what_they_need(cluster_env, tmp_path):
    """Before: 'not valid JSON'."""
    wtns = tmp_path / "w0.wtns"
    wtns.write_bytes(_wtns([1, 2]))
    for args in ([str(wtns)], ["--type", "circom", str(wtns)]):
        run = proofq("submit", *args, env=cluster_env)
        assert run.returncode == 2
        assert run.stderr.strip().splitlines() == [
            f"Error: {wtns}: a circom witness; prove witnesses with --type circom --key KEY_ID "
            "(proofq keys list shows the imported keys)"]


def test_version_and_keys_list(params_dir):
    from importlib.metadata import version

    run = proofq("--version", env={})
    assert run.stdout.strip() == f"proofq, version {version('proofq')}"
    listed = json.loads(proofq("keys", "list", "--json",
                               env={"PROOFQ_PARAMS_DIR": str(params_dir)}).stdout)
    made = sorted(p.parent.name for p in params_dir.glob("*/manifest.json"))
    assert sorted(k["key_id"] for k in listed["keys"]) == made and made
    for key in listed["keys"]:
        assert key["kind"] == "proofq setup" and key["constraints"] > 0 and key["bytes"] > 0
    text = proofq("keys", "list", env={"PROOFQ_PARAMS_DIR": str(params_dir)}).stdout
    count = f"{len(made)} key{'' if len(made) == 1 else 's'} in {params_dir}"
    assert text.splitlines()[0] == count and all(key in text for key in made)


def test_a_worker_without_a_redis_url_says_which_it_uses(tmp_path):
    """Before: silence, while the CLI refuses to run without one."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "tasks", "worker", "-c",
                               "1"], cwd=tmp_path, env=base, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        for line in worker.stdout:
            if "PROOFQ_REDIS_URL" in line:
                break
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
    assert "WARNING" in line and "PROOFQ_REDIS_URL is not set: this worker uses " \
        "redis://127.0.0.1:6379/0" in line
