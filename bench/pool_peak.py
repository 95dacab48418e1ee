"""The device pool's peak bytes in use while a block runs: what a step allocates beyond
what was resident before it (``bench/filecoin_gpu.py``'s partitions, ``bench/msm_bench.py``'s
MSMs)."""

from __future__ import annotations


class PoolPeak:
    """The device pool's peak bytes in use, above those in use at the start, while the block
    runs: a partition's scratch (its key and witness tapes were resident before). Every
    allocation of the block passes through ``track``, the pool's own ``malloc`` beneath."""

    def __enter__(self) -> PoolPeak:
        import cupy

        self._pool = cupy.get_default_memory_pool()
        self._base = self._peak = self._pool.used_bytes()
        cupy.cuda.set_allocator(self.track)
        return self

    def track(self, size: int):
        memory = self._pool.malloc(size)
        self._peak = max(self._peak, self._pool.used_bytes())
        return memory

    def __exit__(self, *exc) -> None:
        import cupy

        cupy.cuda.set_allocator(self._pool.malloc)

    @property
    def scratch_bytes(self) -> int:
        return self._peak - self._base
