"""``filecoin`` as a plug-in (``snark.plugins``): one sector's C1 as Curio writes it (or
under ``--key development``, proofq's own key of the circuit), one unit per partition; the
witness (its shape's plan) can be run on a GPU from the partition's private data
(``snark.plan_staging``, ``gpu.plan_witness``); its settings are ``FilecoinSettings`` and
its commands ``client.commands.filecoin``'s."""

from __future__ import annotations

import re
from typing import Any

from snark.job_input import InputLimits
from snark.plugins import InputForms, ProofTypePlugin, ReadFile
from snark.proof_types import Storage
from snark.filecoin.proof_type import FilecoinType


def _claim(head: bytes) -> int:
    return 1 if head.lstrip().startswith(b"{") else 0  # a JSON object no other type claims


#: Curio's c1.json starts with ``SectorNum``; ``MinerId``, ``sector_id`` and ``miner_id``
#: stand first or last in the forms proofq reads (a C1, a job, an update).
_NUMBERS = {"sector": re.compile(rb'"(?:SectorNum|sector_id)"\s*:\s*(\d+)'),
            "miner": re.compile(rb'"(?:MinerId|miner_id)"\s*:\s*(\d+)')}


def sector_of(head: bytes, tail: bytes) -> dict[str, int]:
    """The sector and miner a stored input's first and last bytes name (``filecoin`` and
    ``snap`` inputs name one sector; a PoSt partition names many: none)."""
    return {name: int(match.group(1)) for name, pattern in _NUMBERS.items()
            if (match := pattern.search(head) or pattern.search(tail))}


def _with_key(key_id: str, files: tuple[str | bytes, ...], read: ReadFile,
              limits: InputLimits, storage: Storage) -> Any:
    from snark.filecoin.job import filecoin_envelope

    first = files[0]
    return filecoin_envelope(first if isinstance(first, bytes) else read(first), key_id)


def _sample(key_id: str | None, sector_size: str, partitions: int,
            challenges: int) -> tuple[Any, str]:
    """A freshly sealed 2 KiB TEST sector's c1.json, under the development key unless
    ``key_id`` names another."""
    import numpy as np

    from snark.filecoin import curio_json, registered_proof, seal
    from snark.filecoin.job import filecoin_envelope

    key = key_id or "development"
    c1 = seal(registered_proof("StackedDrg2KiBV1_1"), np.random.default_rng())
    return (filecoin_envelope(curio_json(c1, 1), key),
            f"sealed a 2 KiB test sector ({c1.proof.name}); proving under the {key} key")


PLUGIN = ProofTypePlugin(
    FilecoinType(), worker="snark.filecoin.worker:FilecoinWorker",
    settings="snark.filecoin.settings:FilecoinSettings",
    unit="partition proof",
    inputs=InputForms(claim=_claim, with_key=_with_key, sample=_sample),
    capability="plan-witness", device_steps="gpu.plan_witness:PlanWitnessDevice",
    commands="client.commands.filecoin:COMMANDS",
    curio_kinds="client.cuzk.filecoin_kinds:POREP", sector_of=sector_of)
