"""Filecoin's settings (``PROOFQ_FILECOIN_…``), for the ``filecoin``, ``snap`` and PoSt types:
made where a worker half or a command needs them (``config.settings.load_model``) and passed
in, never read globally."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class FilecoinSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PROOFQ_FILECOIN_", extra="forbid")

    params_dir: Path = Field(Path("/var/tmp/filecoin-proof-parameters"),
                             description="Filecoin's official .params/.vk files, by their "
                                         "official names (where Filecoin's tools keep them)")
    key: Literal["official", "development"] = Field(
        "official", description="the key a job that names none is proved under: Filecoin's "
                                "official one, or (a development cluster) proofq's own setup "
                                "of the circuit")
