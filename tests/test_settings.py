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


@pytest.mark.parametrize("url, message", [
    ("garbage", "'garbage' is not a Redis URL (expected redis://host:port/db"),
    ("http://x:6379/0", "'http://x:6379/0' is not a Redis URL"),
    ("redis://h:6379/abc", "'redis://h:6379/abc': the database 'abc' is not a number"),
    ("redis://h:port/0", "the port is not a number"),
    ("redis:///0", "names no host"),
])
def test_malformed_redis_url_is_one_line(monkeypatch, url, message):
    monkeypatch.setenv("PROOFQ_REDIS_URL", url)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    line = str(caught.value)
    assert line.startswith("PROOFQ_REDIS_URL: ") and message in line and "\n" not in line


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/0", "rediss://u:p@h:1/15", "redis://h",
                                 "unix:///run/redis.sock?db=2"])
def test_usable_redis_urls_are_accepted(monkeypatch, url):
    monkeypatch.setenv("PROOFQ_REDIS_URL", url)
    assert load_settings().redis_url == url


def test_msm_table_bytes_defaults_to_the_backend_share_and_refuses_negatives(monkeypatch):
    assert load_settings().msm_table_bytes is None  # gpu.backend: an eighth of the device
    monkeypatch.setenv("PROOFQ_MSM_TABLE_BYTES", "0")
    assert load_settings().msm_table_bytes == 0
    monkeypatch.setenv("PROOFQ_MSM_TABLE_BYTES", "-1")
    with pytest.raises(SettingsError, match="PROOFQ_MSM_TABLE_BYTES"):
        load_settings()


def test_transient_key_types_default_to_the_plugins_and_read_a_json_list(monkeypatch):
    assert load_settings().transient_key_types is None  # the types' records decide
    monkeypatch.setenv("PROOFQ_TRANSIENT_KEY_TYPES", "[]")
    assert load_settings().transient_key_types == []
    monkeypatch.setenv("PROOFQ_TRANSIENT_KEY_TYPES", '["window-post", "snap"]')
    assert load_settings().transient_key_types == ["window-post", "snap"]
    monkeypatch.setenv("PROOFQ_TRANSIENT_KEY_TYPES", "window-post")
    with pytest.raises(SettingsError, match="PROOFQ_TRANSIENT_KEY_TYPES"):
        load_settings()


def test_the_input_limit_is_read_under_its_former_name_too(monkeypatch, tmp_path, rng):
    """``max_c1_bytes`` / ``PROOFQ_MAX_C1_BYTES`` (0.1) still set ``max_input_bytes``; the new
    name wins where both are given."""
    old, new = rng.randrange(1, 1 << 20), rng.randrange(1, 1 << 20)
    monkeypatch.setenv("PROOFQ_MAX_C1_BYTES", str(old))
    assert load_settings().max_input_bytes == old
    assert load_settings(max_c1_bytes=new).max_input_bytes == new
    monkeypatch.setenv("PROOFQ_MAX_INPUT_BYTES", str(new))
    assert load_settings().max_input_bytes == new
    monkeypatch.delenv("PROOFQ_MAX_INPUT_BYTES")
    monkeypatch.delenv("PROOFQ_MAX_C1_BYTES")
    path = tmp_path / "proofq.toml"
    path.write_text(f"max_c1_bytes = {old}\n")
    monkeypatch.setenv("PROOFQ_CONFIG", str(path))
    assert load_settings().max_input_bytes == old
    monkeypatch.setenv("PROOFQ_MAX_C1_BYTES", "0")
    with pytest.raises(SettingsError, match="PROOFQ_MAX_INPUT_BYTES: Input should be greater"):
        load_settings()
