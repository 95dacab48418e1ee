"""The template a new proof type starts from: a small type that lives in the tests, to show
what adding one takes (docs/ARCHITECTURE.md §5): its producer half and plug-in record here,
its worker half beside it (``tests.product_worker``), and one entry-point line in its
distribution's metadata, no change anywhere in proofq::

    [project.entry-points."proofq.proof_types"]
    toy-product = "tests.product_type:PLUGIN"

(tests/test_new_proof_type.py writes that line into a temporary distribution.)

``toy-product``: a job is a list of pairs (x, y) of Fr elements; each pair is a unit of work
whose proof says "I know x and y with x·y = c" for the public c = x·y. The input is JSON
``{"pairs": [[x, y], …]}`` (decimal ints), the result the proofs concatenated. Its one
setting, ``PROOFQ_TOY_PRODUCT_MAX_PAIRS``, bounds a job on the workers (``ProductSettings``,
passed into the worker half).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic_settings import BaseSettings, SettingsConfigDict

from snark.errors import InvalidInput
from snark.fields import FR_MODULUS
from snark.job_input import Admission, InputLimits, as_json_text, too_large
from snark.plugins import ProofTypePlugin


class ProductSettings(BaseSettings):
    """The type's settings: ``PROOFQ_TOY_PRODUCT_…``."""

    model_config = SettingsConfigDict(env_prefix="PROOFQ_TOY_PRODUCT_", extra="forbid")

    max_pairs: int = 64


class ProductJobError(InvalidInput):
    """A toy-product input that cannot be used; the message names the field."""


@dataclass(frozen=True)
class ProductJob:
    pairs: tuple[tuple[int, int], ...]

    def to_json(self) -> str:
        return json.dumps({"pairs": [list(p) for p in self.pairs]}, separators=(",", ":"))


def _pair(value: object, field: str) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2
            and all(type(v) is int and 0 <= v < FR_MODULUS for v in value)):
        raise ProductJobError(f"{field}: expected [x, y], two ints in [0, r)")
    return value[0], value[1]


class ProductType:
    name = "toy-product"

    def parse(self, raw: object, limits: InputLimits) -> ProductJob:
        text = as_json_text(raw, ProductJob, ProductJobError, "job")
        if len(text) > limits.max_input_bytes:
            raise ProductJobError(too_large("job", len(text), limits.max_input_bytes))
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeError) as exc:
            raise ProductJobError(f"job: not valid JSON ({exc})") from None
        pairs = data.get("pairs") if isinstance(data, dict) else None
        if not isinstance(pairs, list) or not pairs:
            raise ProductJobError('pairs: expected a non-empty list')
        return ProductJob(tuple(_pair(p, f"pairs[{i}]") for i, p in enumerate(pairs)))

    def admit(self, raw: object, limits: InputLimits) -> Admission:
        job = self.parse(raw, limits)
        return Admission(canonical_json=job.to_json(), partitions=len(job.pairs))

    def key_name(self, job_input: ProductJob) -> str:
        return "toy-product"  # one circuit for every job


PLUGIN = ProofTypePlugin(ProductType(), worker="tests.product_worker:ProductWorker",
                         settings="tests.product_type:ProductSettings")
