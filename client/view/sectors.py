"""The sector and miner a job proves, for the job view's columns.

Read by the job's type (``snark.plugins.ProofTypePlugin.sector_of``, for the types whose
input names one sector) from the first and last bytes of its stored input, so a 51 MB C1 is
never loaded to draw a table row. The input is dropped when a job ends: what was read is
remembered here while the view runs.
"""

from __future__ import annotations

from collections import OrderedDict

from snark.registry import UnknownProofType, plugin
from tasks.jobs import JobState, JobStore

_EDGE = 512
_REMEMBERED: OrderedDict[str, dict[str, int]] = OrderedDict()
_REMEMBER_AT_MOST = 10_000


def sector_of(store: JobStore, state: JobState) -> dict[str, int]:
    """``{"sector": N, "miner": M}`` as far as the job's input names them, else fewer keys."""
    try:
        read = plugin(state.proof_type).sector_of
    except UnknownProofType:
        return {}
    if read is None:
        return {}
    if state.job_id in _REMEMBERED:
        return _REMEMBERED[state.job_id]
    key = store.key(state.job_id) + ":input"
    pipe = store.redis.pipeline(transaction=False)
    pipe.exists(key).getrange(key, 0, _EDGE - 1).getrange(key, -_EDGE, -1)
    exists, head, tail = pipe.execute()
    if not exists:
        return {}
    found = read(head, tail)
    _REMEMBERED[state.job_id] = found
    if len(_REMEMBERED) > _REMEMBER_AT_MOST:
        _REMEMBERED.popitem(last=False)
    return found
