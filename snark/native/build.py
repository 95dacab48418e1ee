"""Compile C++ sources into a shared library once and keep it, for ctypes.

A library is built on first use into a cache directory (``PROOFQ_NATIVE_CACHE``, default
``~/.cache/proofq/native``) under a name keyed by everything that makes it: the sources'
and headers' contents, the flags, the compiler's version and the machine (with
``-march=native``, the CPU's model and flags too), so a change to any of them builds a new
one and parallel processes share the result. Sources compile in parallel (one g++ per
file), then link; the finished file is renamed into place, so a reader never sees half of it.
A build says so in one log line before it starts and one when done (a warning: the CLI,
whose logging is unconfigured, prints it on stderr, and a worker's log shows it), since it
is the first command's (or a worker's first job's) silent minute otherwise.
``gpu.hostlib`` builds its host copy of the kernel headers with this as well.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from snark.backend import BackendUnavailable


log = logging.getLogger(__name__)

#: What the first build of proofq-native took on a 2-core machine (README's fresh clone).
FIRST_BUILD_GUESS = "about a minute on 2 cores"


class NativeUnavailable(BackendUnavailable):
    """No C++ compiler here, or it rejected the sources; the message has its words."""


@lru_cache(maxsize=1)
def compiler() -> str:
    found = shutil.which(os.environ.get("CXX", "g++"))
    if found is None:
        raise NativeUnavailable("native code needs a C++17 compiler: g++ was not found "
                                "(install g++, or set CXX)")
    return found


@lru_cache(maxsize=None)
def _compiler_identity(path: str) -> str:
    run = subprocess.run([path, "-dumpfullversion", "-dumpmachine"], capture_output=True,
                         text=True)
    return run.stdout.strip()


@lru_cache(maxsize=1)
def _cpu_identity() -> str:
    """The CPU's model and feature flags, for code built with ``-march=native``."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor()
    wanted = ("model name", "flags", "Features", "CPU part")
    return "\n".join(sorted({line for line in lines if line.startswith(wanted)}))


def cache_dir() -> Path:
    root = os.environ.get("PROOFQ_NATIVE_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "proofq" / "native"


def library_key(sources: Sequence[Path], headers: Sequence[Path], flags: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for path in [*sources, *sorted(headers)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\0".join(flags).encode())
    digest.update(_compiler_identity(compiler()).encode())
    digest.update(platform.machine().encode())
    if "-march=native" in flags:
        digest.update(_cpu_identity().encode())
    return digest.hexdigest()[:20]


def _first_errors(stderr: str, lines: int = 6) -> str:
    errors = [line for line in stderr.splitlines() if "error" in line]
    return "\n".join((errors or stderr.splitlines())[:lines])


def _run(what: str, command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise NativeUnavailable(f"{Path(command[0]).name} failed on {what}:\n"
                                f"{_first_errors(result.stderr)}")


def shared_library(name: str, sources: Sequence[Path], *, headers: Sequence[Path] = (),
                   flags: Sequence[str] = ()) -> Path:
    """The built ``.so`` of ``sources`` (compiled with ``flags`` plus -shared -fPIC),
    from the cache, or built there now."""
    cxx = compiler()
    sources = [Path(s) for s in sources]
    headers = [Path(h) for h in headers]
    flags = list(flags)
    target = cache_dir() / f"{name}-{library_key(sources, headers, flags)}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    took = target.parent / f"{name}.seconds"  # the last build's time here, for the next one
    try:
        guess = f"~{float(took.read_text()):.0f} s last time here"
    except (OSError, ValueError):
        guess = FIRST_BUILD_GUESS
    log.warning("building the native library %s (once per machine and version, %s) …",
                name, guess)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{name}-") as tmp:
        objects = [Path(tmp) / f"{i}-{s.stem}.o" for i, s in enumerate(sources)]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            list(pool.map(_run, [s.name for s in sources],
                          [[cxx, *flags, "-fPIC", "-c", str(s), "-o", str(o)]
                           for s, o in zip(sources, objects)]))
        built = Path(tmp) / target.name
        _run(f"linking {name}", [cxx, *flags, "-shared", "-fPIC", *map(str, objects), "-o",
                                 str(built)])
        os.replace(built, target)  # atomic: parallel builds of one key are harmless
    seconds = time.monotonic() - started
    took.write_text(f"{seconds:.1f}")
    log.warning("built the native library %s in %.0f s: %s", name, seconds, target)
    return target
