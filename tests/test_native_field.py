"""snark.native's Fr vector operations against Python ints, its build and its errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from snark import native
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints, random_fr
from snark.native import build, library

EDGES = [0, 1, 2, R - 1, R - 2, (R - 1) // 2, 1 << 64, (1 << 254) - 1]


def _with_edges(rng, n: int) -> list[int]:
    return EDGES + [rng.randrange(R) for _ in range(n)]


def test_the_assembly_header_is_what_its_generator_writes():
    src = Path(library.SOURCE_DIR)
    run = subprocess.run([sys.executable, str(src / "mont_asm.py")], capture_output=True,
                         text=True, check=True)
    assert run.stdout == (src / "mont_asm.hpp").read_text()


@pytest.mark.parametrize("name, op", [("fr_add", lambda x, y: x + y),
                                      ("fr_sub", lambda x, y: x - y),
                                      ("fr_mul", lambda x, y: x * y)])
def test_elementwise_ops_match_ints(name, op, rng):
    a = _with_edges(rng, 300)
    b = list(reversed(_with_edges(rng, 300)))
    got = getattr(native, name)(fr_to_limbs(a), fr_to_limbs(b))
    assert limbs_to_ints(got) == [op(x, y) % R for x, y in zip(a, b)]
    k = rng.randrange(R)
    assert limbs_to_ints(getattr(native, name)(fr_to_limbs(a), k)) == [op(x, k) % R for x in a]


def test_batch_inverse_and_a_zero(rng):
    values = [v for v in _with_edges(rng, 40_000) if v]  # several parallel chunks
    got = native.fr_batch_inverse(fr_to_limbs(values))
    assert limbs_to_ints(got) == [pow(v, -1, R) for v in values]
    values[rng.randrange(len(values))] = 0
    with pytest.raises(ValueError, match=r"values\[\d+\] is zero"):
        native.fr_batch_inverse(fr_to_limbs(values))


def test_powers_and_lagrange_basis(rng):
    base, scale = rng.randrange(R), rng.randrange(R)
    assert limbs_to_ints(native.fr_powers(base, 50, scale)) == [scale * pow(base, i, R) % R
                                                                 for i in range(50)]
    from snark.domain import Domain

    n, tau = 64, rng.randrange(R)
    domain = Domain(n)
    want = [(pow(tau, n, R) - 1) * w * pow(n * (tau - w), -1, R) % R for w in domain.elements()]
    assert limbs_to_ints(native.lagrange_at(n, tau)) == want
    assert limbs_to_ints(native.lagrange_at(n, tau, 10)) == want[:10]
    with pytest.raises(ValueError, match="tau is in the domain"):
        native.lagrange_at(n, domain.omega)


def test_bad_input_is_a_one_line_error_naming_it(np_rng):
    a = random_fr(8, np_rng)
    bad = a.copy()
    bad[5] = fr_to_limbs([R])[0]
    with pytest.raises(ValueError, match=r"^b\[5\] is not a canonical Fr element \(>= r\)$"):
        native.fr_mul(a, bad)
    with pytest.raises(ValueError, match=r"a: expected Fr limbs of shape \(n, 4\)"):
        native.fr_add(a[:, :3], a)
    with pytest.raises(ValueError, match="b: 3 rows for 8"):
        native.fr_add(a, a[:3])
    with pytest.raises(ValueError, match="uint64"):
        native.fr_add(a.astype(np.int64), a)


def test_thread_count_from_the_environment(monkeypatch):
    monkeypatch.setenv("PROOFQ_CPU_THREADS", "3")
    assert library.default_threads() == 3
    monkeypatch.setenv("PROOFQ_CPU_THREADS", "zero")
    with pytest.raises(ValueError, match="PROOFQ_CPU_THREADS"):
        library.default_threads()
    monkeypatch.delenv("PROOFQ_CPU_THREADS")
    assert library.default_threads() >= 1
    before = native.threads()
    try:
        native.set_threads(5)
        assert native.threads() == 5
    finally:
        native.set_threads(before)
    with pytest.raises(ValueError, match="positive"):
        native.set_threads(0)


@pytest.mark.slow
def test_the_portable_product_agrees_with_the_assembly(np_rng):
    """The C Montgomery product (other machines, PQ_PORTABLE) gives what the x86-64 one
    does: a build of each, the same products and a small MSM."""
    portable = library.load(library.PORTABLE_FLAGS, library.PORTABLE_SOURCES)
    a, b = random_fr(1000, np_rng), random_fr(1000, np_rng)
    out = np.empty_like(a)
    library.call("pq_fr_op", 2, library.ptr(a), library.ptr(b), 1000, library.ptr(out), 1000,
                 lib=portable)
    assert np.array_equal(out, native.fr_mul(a, b))
    points = native.fixed_base_mul(1, random_fr(64, np_rng))
    bases = native.Bases.from_points(points)
    xy, inf = np.zeros(12, dtype=np.uint64), np.zeros(1, dtype=np.uint8)
    scalars = random_fr(64, np_rng)
    library.call("pq_msm", 1, library.ptr(bases.mont), library.ptr(bases.inf),
                 library.ptr(scalars), 64, None, 64, library.ptr(xy), library.ptr(inf),
                 lib=portable)
    assert native.msm(bases, scalars) == native.msm(points, scalars)
    from snark.curve import point_from_xy

    assert point_from_xy(xy, 1) == native.msm(bases, scalars)


def test_a_missing_compiler_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PROOFQ_NATIVE_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", "no-such-compiler-here")
    (tmp_path / "x.cpp").write_text("int x;\n")
    build.compiler.cache_clear()
    try:
        with pytest.raises(build.NativeUnavailable, match="g\\+\\+ was not found"):
            build.shared_library("x", [tmp_path / "x.cpp"])
    finally:
        build.compiler.cache_clear()


def test_a_compile_error_carries_the_compilers_words(tmp_path, monkeypatch):
    from snark.backend import BackendUnavailable

    monkeypatch.setenv("PROOFQ_NATIVE_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "broken.cpp"
    source.write_text("int f() { return undeclared_name; }\n")
    with pytest.raises(BackendUnavailable, match="broken.cpp.*\n.*undeclared_name"):
        build.shared_library("broken", [source])
    assert not list((tmp_path / "cache").glob("*.so"))


def test_builds_are_cached_by_content_and_flags(tmp_path, monkeypatch):
    monkeypatch.setenv("PROOFQ_NATIVE_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "one.cpp"
    source.write_text('extern "C" int one() { return 1; }\n')
    first = build.shared_library("one", [source])
    assert build.shared_library("one", [source]) == first
    assert build.shared_library("one", [source], flags=["-O1"]) != first
    source.write_text('extern "C" int one() { return 2; }\n')
    assert build.shared_library("one", [source]) != first


def test_a_build_says_so_before_it_starts_and_a_cached_one_is_silent(tmp_path):
    """Before: the first command's native build was a minute with no output. Run as the CLI
    runs it (logging unconfigured): the line goes to stderr."""
    source = tmp_path / "one.cpp"
    source.write_text('extern "C" int one() { return 1; }\n')
    script = ("import sys; from pathlib import Path; from snark.native.build import "
              "shared_library; shared_library('one', [Path(sys.argv[1])])")
    env = {**os.environ, "PROOFQ_NATIVE_CACHE": str(tmp_path / "cache")}

    def build_once() -> list[str]:
        run = subprocess.run([sys.executable, "-c", script, str(source)], env=env,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        return run.stderr.splitlines()

    first = build_once()
    assert first[0] == ("building the native library one (once per machine and version, "
                        "about a minute on 2 cores) …"), first
    assert re.fullmatch(r"built the native library one in \d+ s: .*one-\w+\.so", first[1]), first
    assert build_once() == []
    source.write_text('extern "C" int one() { return 2; }\n')
    again = build_once()
    assert re.fullmatch(r"building the native library one \(once per machine and version, "
                        r"~\d+ s last time here\) …", again[0]), again
