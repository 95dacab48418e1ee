"""One run of each kernel the notes profile, for ``ncu`` (the notebook gives the command:
docs/notebook/2026-12-01-issue-11-msm-and-ntt-against-sppark-g2.md):
a G1 MSM (2^22 points unless ``--g1``), a G2 MSM (2^20, ``--g2``), with window tables if
``--tables``, and a natural-order Fr NTT (2^24, ``--ntt``; 0 skips a step), each after a
warm-up (so NVRTC and the memory pool stay out of the profiled launches)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy  # noqa: E402
from cupyx.profiler import profile  # noqa: E402

from gpu.fixed_base import GpuFixedBase  # noqa: E402
from gpu.msm import MsmBases, msm, table_plan  # noqa: E402
from gpu.ntt import engine  # noqa: E402
from snark.fields import random_fr  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--g1", type=int, default=22)
    parser.add_argument("--g2", type=int, default=20)
    parser.add_argument("--ntt", type=int, default=24)
    parser.add_argument("--tables", action="store_true")
    args = parser.parse_args()
    fixed = GpuFixedBase()
    for group, log_n in ((1, args.g1), (2, args.g2)):
        if not log_n:
            continue
        n = 1 << log_n
        bases = MsmBases((fixed.mul_g1 if group == 1 else fixed.mul_g2)(random_fr(n)),
                         table=table_plan(n) if args.tables else None)
        scalars = cupy.asarray(random_fr(n))
        msm(bases, scalars)
        cupy.cuda.runtime.deviceSynchronize()
        with profile():
            msm(bases, scalars)
        del bases, scalars
    if not args.ntt:
        return
    ntt = engine(cupy.cuda.Device().id)
    ntt.prepare(args.ntt)
    x = cupy.asarray(random_fr(1 << args.ntt))
    y = cupy.empty_like(x)
    ntt.dit(x, y, gather=True)
    cupy.cuda.runtime.deviceSynchronize()
    with profile():
        ntt.dit(x, y, gather=True)
        cupy.cuda.runtime.deviceSynchronize()


if __name__ == "__main__":
    main()
