"""One run of each kernel the notes profile, for ``ncu`` (bench/NOTES.md gives the command):
a G1 MSM of 2^22 points, a G2 MSM of 2^20 and a natural-order Fr NTT of 2^24, each after a
warm-up (so NVRTC and the memory pool stay out of the profiled launches)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy  # noqa: E402
from cupyx.profiler import profile  # noqa: E402

from gpu.fixed_base import GpuFixedBase  # noqa: E402
from gpu.msm import MsmBases, msm  # noqa: E402
from gpu.ntt import engine  # noqa: E402
from snark.fields import random_fr  # noqa: E402


def main() -> None:
    fixed = GpuFixedBase()
    for group, log_n in ((1, 22), (2, 20)):
        n = 1 << log_n
        bases = MsmBases((fixed.mul_g1 if group == 1 else fixed.mul_g2)(random_fr(n)))
        scalars = cupy.asarray(random_fr(n))
        msm(bases, scalars)
        cupy.cuda.runtime.deviceSynchronize()
        with profile():
            msm(bases, scalars)
        del bases, scalars
    ntt = engine(cupy.cuda.Device().id)
    ntt.prepare(24)
    x = cupy.asarray(random_fr(1 << 24))
    y = cupy.empty_like(x)
    ntt.dit(x, y, gather=True)
    cupy.cuda.runtime.deviceSynchronize()
    with profile():
        ntt.dit(x, y, gather=True)
        cupy.cuda.runtime.deviceSynchronize()


if __name__ == "__main__":
    main()
