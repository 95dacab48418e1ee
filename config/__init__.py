"""Settings for every room: `from config import get_settings`."""

from config.settings import Settings, SettingsError, get_settings

__all__ = ["Settings", "SettingsError", "get_settings"]
