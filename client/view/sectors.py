"""The sector and miner a Filecoin job proves, for the job view's columns.

Read from the first and last bytes of the job's stored input (Curio's c1.json starts with
``SectorNum``; ``MinerId``, ``sector_id`` and ``miner_id`` stand first or last in the forms
proofq reads), so a 51 MB C1 is never loaded to draw a table row. The input is dropped when
a job ends: what was read is remembered here while the view runs.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from tasks.jobs import JobState, JobStore

#: The types whose input names one sector (a PoSt partition names many: no column).
ONE_SECTOR_TYPES = ("filecoin", "snap")
_EDGE = 512
_NUMBERS = {"sector": re.compile(rb'"(?:SectorNum|sector_id)"\s*:\s*(\d+)'),
            "miner": re.compile(rb'"(?:MinerId|miner_id)"\s*:\s*(\d+)')}
_REMEMBERED: OrderedDict[str, dict[str, int]] = OrderedDict()
_REMEMBER_AT_MOST = 10_000


def sector_of(store: JobStore, state: JobState) -> dict[str, int]:
    """``{"sector": N, "miner": M}`` as far as the job's input names them, else fewer keys."""
    if state.proof_type not in ONE_SECTOR_TYPES:
        return {}
    if state.job_id in _REMEMBERED:
        return _REMEMBERED[state.job_id]
    key = store.key(state.job_id) + ":input"
    pipe = store.redis.pipeline(transaction=False)
    pipe.exists(key).getrange(key, 0, _EDGE - 1).getrange(key, -_EDGE, -1)
    exists, head, tail = pipe.execute()
    if not exists:
        return {}
    found = {name: int(match.group(1)) for name, pattern in _NUMBERS.items()
             if (match := pattern.search(head) or pattern.search(tail))}
    _REMEMBERED[state.job_id] = found
    if len(_REMEMBERED) > _REMEMBER_AT_MOST:
        _REMEMBERED.popitem(last=False)
    return found
