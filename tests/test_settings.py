"""Settings: env prefix, TOML file, and start-up errors that name the setting."""

from __future__ import annotations

import pytest

from config.settings import SettingsError, load_settings


def test_env_overrides(monkeypatch):
    monkeypatch.setenv("PROOFQ_WORKERS_PER_GPU", "3")
    assert load_settings().workers_per_gpu == 3


def test_invalid_value_names_the_setting(monkeypatch):
    monkeypatch.setenv("PROOFQ_LOCK_LEASE_S", "soon")
    with pytest.raises(SettingsError, match="PROOFQ_LOCK_LEASE_S"):
        load_settings()


def test_unknown_backend_rejected(monkeypatch):
    monkeypatch.setenv("PROOFQ_BACKEND", "tpu")
    with pytest.raises(SettingsError, match="PROOFQ_BACKEND"):
        load_settings()


def test_toml_file(tmp_path, monkeypatch):
    path = tmp_path / "proofq.toml"
    path.write_text('heartbeat_s = 1.5\nlock_lease_s = 6.0\n')
    monkeypatch.setenv("PROOFQ_CONFIG", str(path))
    settings = load_settings()
    assert (settings.heartbeat_s, settings.lock_lease_s) == (1.5, 6.0)


def test_missing_toml_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PROOFQ_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings()


def test_heartbeat_must_be_shorter_than_lease(monkeypatch):
    monkeypatch.setenv("PROOFQ_HEARTBEAT_S", "40")
    with pytest.raises(SettingsError, match="heartbeat_s"):
        load_settings()
