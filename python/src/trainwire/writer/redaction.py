"""Secrets out of configs before they reach the stream (writer rule 8)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from trainwire.writer.encoding import safe_str, to_scalar

__all__ = ["REDACTED", "SECRET_MARKERS", "is_secret_key", "redact_config"]

logger = logging.getLogger("trainwire.writer.redaction")

REDACTED = "<redacted>"
#: a key whose lower-cased name contains one of these has its value replaced
SECRET_MARKERS = (
    "token",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "credential",
    "auth",
)
# deeper than this a value is written as its string form (and a cycle cannot recurse forever)
_MAX_DEPTH = 32


def is_secret_key(key: object) -> bool:
    """Whether a config key names a secret."""
    name = str(key).lower()
    return any(marker in name for marker in SECRET_MARKERS)


def redact_config(config: Any) -> dict[str, Any]:
    """A JSON-able copy of `config` with secret values replaced by `"<redacted>"`.

    Nested mappings and lists are followed; keys become strings; a value that is not
    JSON-able becomes its `str()`. `config` is a mapping, or an object with `to_dict()`
    (e.g. `transformers.TrainingArguments`) or attributes. Never raises.
    """
    try:
        return _redact_mapping(_as_mapping(config), 0)
    except Exception:
        logger.warning("trainwire: the config could not be copied; it is left out", exc_info=True)
        return {}


def _as_mapping(config: Any) -> Mapping[Any, Any]:
    if isinstance(config, Mapping):
        return config
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):
        return to_dict()  # type: ignore[no-any-return]
    attributes: dict[str, Any] = vars(config)
    return attributes


def _redact_mapping(mapping: Mapping[Any, Any], depth: int) -> dict[str, Any]:
    return {
        str(key): REDACTED if is_secret_key(key) else _redact_value(value, depth + 1)
        for key, value in mapping.items()
    }


def _redact_value(value: Any, depth: int) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > _MAX_DEPTH:
        return safe_str(value)
    if isinstance(value, Mapping):
        return _redact_mapping(value, depth)
    if isinstance(value, (list, tuple)):
        return [_redact_value(item, depth + 1) for item in value]
    return to_scalar(value)

