"""proofq settings: environment variables prefixed ``PROOFQ_``, optionally a TOML file.
A proof type's own settings are a model of its plug-in (``PROOFQ_<TYPE>_…``, environment
variables only), made with ``load_model`` where its worker half is made and passed in.

Precedence (highest first): explicit keyword arguments, environment variables, the TOML file
named by ``PROOFQ_CONFIG`` (or ``proofq.toml`` in the working directory), then defaults.
Invalid values fail at start with a message naming the setting (``SettingsError``).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from config.redis_keys import DEFAULT_NAMESPACE, NAMESPACE_PATTERN


class SettingsError(ValueError):
    """A setting has an invalid value; the message names it."""


def _toml_path() -> Path | None:
    named = os.environ.get("PROOFQ_CONFIG")
    if named:
        return Path(named)
    local = Path("proofq.toml")
    return local if local.exists() else None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PROOFQ_", extra="forbid")

    # Where things live.
    params_dir: Path = Field(Path.home() / ".cache" / "proofq" / "params",
                             description="proving keys, one directory per circuit id")
    redis_url: str | None = Field(None, description="broker/result/state Redis; None = embedded")
    namespace: str = Field(DEFAULT_NAMESPACE, pattern=f"^{NAMESPACE_PATTERN.pattern}$",
                           description="prefix of every Redis key of this cluster "
                                       "(config/redis_keys.py): clusters of different "
                                       "namespaces share one Redis database")

    # Proving.
    backend: Literal["auto", "cpu", "gpu"] = "auto"
    max_input_bytes: int = Field(
        64 * 1024 * 1024, gt=0,
        # max_c1_bytes / PROOFQ_MAX_C1_BYTES: its name in 0.1, read for one more release
        validation_alias=AliasChoices("max_input_bytes", "PROOFQ_MAX_INPUT_BYTES",
                                      "max_c1_bytes", "PROOFQ_MAX_C1_BYTES"),
        description="largest accepted job input JSON, of any proof type")
    max_inline_witness_bytes: int = Field(4 * 1024 * 1024, gt=0,
                                          description="largest witness a job carries in Redis "
                                                      "(a circom .wtns); larger ones travel "
                                                      "as a path under witness_dir")
    max_units_per_job: int = Field(16_384, gt=0,
                                   description="most units (partitions, witnesses) one job may "
                                               "have: each costs Redis a message and a part, "
                                               "~2 KiB (UNIT_REDIS_BYTES), so 32 MiB at most")
    max_amplification: float = Field(16.0, gt=0,
                                     description="most Redis bytes one job may cost per byte of "
                                                 "its input (units x UNIT_REDIS_BYTES against "
                                                 "the input), checked above 1 MiB")
    redis_high_water: float = Field(0.8, gt=0, le=1,
                                    description="new jobs are refused while Redis's used_memory "
                                                "is above this share of its maxmemory")
    fair_share_units: int = Field(8, gt=0,
                                  description="units of one job sent at its priority's own "
                                              "step; later ones one step behind (and the ones "
                                              "after the square of it two), so a large job "
                                              "cannot starve the jobs behind it")
    witness_dir: Path | None = Field(None, description="shared storage every worker mounts; "
                                                       "the paths of job inputs too large for "
                                                       "Redis are relative to it")

    # Celery pipeline.
    visibility_timeout_s: int = Field(4 * 3600, gt=0,
                                      description="must exceed the longest partition")
    task_max_retries: int = Field(3, ge=0)
    retry_backoff_s: float = Field(2.0, gt=0)
    reap_after_s: float = Field(60.0, gt=0,
                                description="a dead worker's tasks go back to their queue this "
                                            "long after its last heartbeat")
    refusals_to_fail: int = Field(3, ge=1,
                                  description="a job whose work this many distinct workers (or "
                                              "every live one, if fewer) gave back as unable "
                                              "to serve it fails: 'no worker can serve it'")
    refusal_pause_s: float = Field(1.0, ge=0,
                                   description="a worker that gave work back waits this long "
                                               "before it takes more (another worker gets it)")
    quarantine_after: int = Field(2, ge=1,
                                  description="worker faults in a row (its key, its device, "
                                              "its settings) after which a worker stops "
                                              "taking that proof type's work")
    quarantine_retry_s: float = Field(300.0, gt=0,
                                      description="a quarantined worker tries one piece of the "
                                                  "work again this often (lifted if it "
                                                  "succeeds)")
    events_maxlen: int = Field(100_000, gt=0, description="cap of the proofq:events stream")
    results_maxlen: int = Field(10_000, gt=0, description="cap of the proofq:results stream")
    job_ttl_s: int = Field(7 * 24 * 3600, gt=0,
                           description="how long a finished job's state and result are kept")
    grpc_token: str | None = Field(None, description="a bearer token every call to proofq "
                                                     "grpc must carry (unset: none)")

    # GPU worker runtime.
    workers_per_gpu: int = Field(2, ge=1)
    cpu_devices: int | None = Field(None, ge=1,
                                    description="lock pairs shared by the CPU worker processes "
                                                "of a host; None = one per process")
    lock_lease_s: float = Field(30.0, gt=0, description="lease of a held GPU lock")
    heartbeat_s: float = Field(5.0, gt=0, description="lease renewal period")
    vram_budget_bytes: int | None = Field(None, gt=0,
                                          description="None = read once at worker start")
    vram_headroom_bytes: int = Field(2 * 1024**3, ge=0)
    msm_table_bytes: int | None = Field(None, ge=0,
                                        description="device memory for the MSM window tables of "
                                                    "the resident keys, all together: per GPU "
                                                    "with shared keys, else per worker process "
                                                    "(~13x the bases, ~15% off a 2^20 proof; "
                                                    "gpu/backend.py); None = an eighth of the "
                                                    "GPU's memory, 0 = off")
    shared_keys: bool = Field(True, description="the GPU worker processes of a GPU hold one "
                                                "device copy of each key, kept by one keeper "
                                                "process (gpu/shared_keys.py); off = a copy "
                                                "per process")
    prestage: bool = Field(True, description="upload inputs in the memory phase when they fit")
    witness_on_device: bool = Field(True, description="a backend that can compute a proof "
                                                      "type's witness does (porep on the GPU); "
                                                      "off = CPU witness")
    metrics_address: str = Field("127.0.0.1", description="address the /metrics endpoint "
                                                          "binds (0.0.0.0: every interface)")
    metrics_port: int | None = Field(None, ge=1, le=65535,
                                     description="Prometheus /metrics port (first free at or "
                                                 "above it, one per worker process); None = off")

    # PoSt on time under PoRep load (docs/operators.md, "Proofs of spacetime on time").
    critical_slots: int = Field(0, ge=0,
                                description="how many of a worker's processes only critical "
                                            "work (WinningPoSt) may take; the worker's "
                                            "--critical-slots overrides it")
    pinned_key_bytes: int = Field(4 << 30, ge=0,
                                  description="a resident key of at most this many device "
                                              "bytes, all pinned ones together (a WinningPoSt "
                                              "key: 0.23 GB, 2.7 GB with window tables) is never "
                                              "evicted for another key; 0 = none pinned")
    transient_key_types: list[str] | None = Field(
        None, description="proof types whose key is on the device only from a partition's "
                          "memory phase to the end of its compute phase, its bases streamed "
                          "from pinned host memory kept between partitions; None = the types "
                          "whose plug-in says so (WindowPoSt), [] = none")

    @field_validator("redis_url")
    @classmethod
    def _redis_url_is_usable(cls, url: str | None) -> str | None:
        """Refuse at start what redis-py would refuse at first use, after a job is stored."""
        if url is not None:
            check_redis_url(url)
        return url

    @model_validator(mode="after")
    def _heartbeat_within_lease(self) -> "Settings":
        if self.heartbeat_s >= self.lock_lease_s:
            raise ValueError("heartbeat_s must be shorter than lock_lease_s")
        if self.heartbeat_s >= self.reap_after_s:
            raise ValueError("heartbeat_s must be shorter than reap_after_s")
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = _toml_path()
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)


def check_redis_url(url: str) -> None:
    """``redis://[user:pass@]host[:port][/db]``, ``rediss://…`` or ``unix://path[?db=n]``."""
    expected = "expected redis://host:port/db, rediss://host:port/db or unix:///path"
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"{url!r} is not a Redis URL ({expected})")
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError(f"{url!r} names no socket path ({expected})")
        return
    if not parts.hostname:
        raise ValueError(f"{url!r} names no host ({expected})")
    try:
        parts.port  # noqa: B018 (parsing it is the check)
    except ValueError:
        raise ValueError(f"{url!r}: the port is not a number from 0 to 65535") from None
    db = parts.path.lstrip("/")
    if db and not db.isdigit():
        raise ValueError(f"{url!r}: the database {db!r} is not a number ({expected})")


def load_settings(**overrides) -> Settings:
    """Build settings, turning validation failures into one readable line per setting."""
    path = _toml_path()
    if path is not None and not path.exists():
        raise SettingsError(f"PROOFQ_CONFIG: file {path} does not exist")
    return load_model(Settings, **overrides)


#: A settings model: proofq's, or a proof type's (``PROOFQ_<TYPE>_…``, snark.plugins).
M = TypeVar("M", bound=BaseSettings)


def load_model(model: type[M], **overrides) -> M:
    """``model`` from its environment variables (and ``overrides``); a ``SettingsError``
    naming each bad variable in one line."""
    prefix = model.model_config.get("env_prefix", "")
    try:
        return model(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{prefix}{'_'.join(str(p) for p in err['loc']).upper() or 'SETTINGS'}: "
            f"{err['msg'].removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        raise SettingsError(problems) from None


@functools.lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()
