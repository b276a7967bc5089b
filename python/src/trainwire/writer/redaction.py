"""Secrets out of what the writer writes (writer rule 8): configs, and error messages.

Keys are matched by whole segments (split on `_ - .`, spaces and case changes) against
the lists below, so `hf_token`, `x-api-key` and `wandb.key` are secrets while
`tokenizer`, `max_tokens`, `pad_token_id` and `author` are settings. In string values,
the password of a URL, the value of `NAME=value` for a secret NAME, and bearer tokens
are masked; the rest of the string is kept.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from trainwire.writer.encoding import safe_str, to_scalar

__all__ = ["REDACTED", "is_secret_key", "key_segments", "redact_config", "redact_text"]

logger = logging.getLogger("trainwire.writer.redaction")

REDACTED = "<redacted>"

#: a key with one of these segments is a secret, wherever the segment stands
SECRET_WORDS = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "secrets", "credential", "credentials",
    "auth", "authorization", "apikey", "accesskey", "privatekey", "secretkey", "authtoken",
    "accesstoken", "cookie", "dsn",
})  # fmt: skip
#: a key ending in `token` is a secret unless the word before names a tokenizer's special token
SPECIAL_TOKENS = frozenset(
    {"pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "start", "end", "image", "audio"}
)
#: a `key` segment right after one of these words is a secret (`api_key`, `x-api-key`, `aws_access_key_id`)
KEY_QUALIFIERS = frozenset({
    "api", "access", "private", "secret", "auth", "encryption", "signing", "ssh", "service",
    "master", "client", "account", "subscription", "license", "storage",
})  # fmt: skip
#: a key named just `key` is a secret under a parent that names a service (`wandb: {key: ...}`)
SERVICES = frozenset({
    "wandb", "openai", "anthropic", "hf", "huggingface", "hub", "aws", "s3", "azure", "gcp",
    "google", "comet", "neptune", "mlflow", "github", "gitlab", "slack", "clearml", "dvc", "api",
})  # fmt: skip

# deeper than this a value is written as its string form (and a cycle cannot recurse forever)
_MAX_DEPTH = 32
_SEGMENT_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# `scheme://user:password@host`: the password goes, user and host stay
_URL_PASSWORD_RE = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)([^\s/@]+)(@)")
# `NAME=value` (environment, command lines, query strings)
_ASSIGNMENT_RE = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_.-]*)(\s*=\s*)([^\s&;,]+)")
# `Bearer <token>` and `Authorization: <scheme> <credentials>`
_BEARER_RE = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
_AUTHORIZATION_RE = re.compile(r"(\bAuthorization\s*[:=]\s*(?:[A-Za-z]+\s+)?)(?!<redacted>)[^\s,;]+", re.IGNORECASE)


def key_segments(key: object) -> list[str]:
    """The lower-case words of a key: `hfToken` and `HF-TOKEN` are both `["hf", "token"]`."""
    return [segment.lower() for segment in _SEGMENT_RE.findall(str(key))]


def is_secret_key(key: object, parent: object = None) -> bool:
    """Whether a config key names a secret; `parent` is the key of the mapping holding it."""
    segments = key_segments(key)
    if not segments:
        return False
    if SECRET_WORDS.intersection(segments):
        return True
    if any(word == "key" and before in KEY_QUALIFIERS for before, word in zip(segments, segments[1:], strict=False)):
        return True  # `api_key`, `x-api-key`, `aws_access_key_id`
    if segments[-1] == "token":
        return len(segments) == 1 or segments[-2] not in SPECIAL_TOKENS
    if segments == ["key"]:
        return parent is not None and bool(SERVICES.intersection(key_segments(parent)))
    return False


def redact_text(text: str) -> str:
    """`text` with URL passwords, secret `NAME=value` values and bearer tokens masked."""
    if "=" not in text and ":" not in text and "earer" not in text:
        return text  # nothing that could hold one: the common case, kept cheap
    text = _URL_PASSWORD_RE.sub(rf"\g<1>{REDACTED}\g<3>", text)
    text = _ASSIGNMENT_RE.sub(_mask_assignment, text)
    text = _AUTHORIZATION_RE.sub(rf"\g<1>{REDACTED}", text)
    return _BEARER_RE.sub(rf"\g<1>{REDACTED}", text)


def _mask_assignment(match: re.Match[str]) -> str:
    if not is_secret_key(match.group(1)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}{REDACTED}"


def redact_config(config: Any) -> dict[str, Any]:
    """A JSON-able copy of `config` with secrets replaced by `"<redacted>"`.

    Nested mappings and sequences are followed (OmegaConf's `DictConfig` and `ListConfig`,
    `UserDict`, `UserList` and any other `Mapping` or `Sequence` too); keys become strings;
    a value that is not JSON-able, or a container that raises while it is read, becomes its
    `str()`. `config` is a mapping, or an object with `to_dict()`
    (e.g. `transformers.TrainingArguments`) or attributes. Never raises.
    """
    try:
        return _redact_mapping(_as_mapping(config), None, 0)
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


def _redact_mapping(mapping: Mapping[Any, Any], parent: object, depth: int) -> dict[str, Any]:
    return {
        str(key): REDACTED if is_secret_key(key, parent) else _redact_value(_item(mapping, key), key, depth + 1)
        for key in mapping
    }


def _item(mapping: Mapping[Any, Any], key: Any) -> Any:
    """`mapping[key]`, or a placeholder naming the error when reading it raises (an
    OmegaConf `???` left unset): the other keys are still written."""
    try:
        return mapping[key]
    except Exception as error:
        return f"<unreadable: {type(error).__name__}>"


def _redact_value(value: Any, key: object, depth: int) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth > _MAX_DEPTH:
        return redact_text(safe_str(value))
    if isinstance(value, Mapping) or _is_array(value):
        try:
            return _redact_container(value, key, depth)
        except Exception:  # an OmegaConf `???` or a broken interpolation raises when read
            return redact_text(safe_str(value))
    scalar = to_scalar(value)
    return redact_text(scalar) if isinstance(scalar, str) else scalar


def _redact_container(value: Mapping[Any, Any] | Sequence[Any], key: object, depth: int) -> Any:
    if isinstance(value, Mapping):
        return _redact_mapping(value, key, depth)
    # list items keep the list's key as their parent: `{"wandb": [{"key": ...}]}`
    return [_redact_value(item, key, depth + 1) for item in value]


def _is_array(value: Any) -> bool:
    """A sequence of items (a list, a tuple, a `UserList`, an OmegaConf `ListConfig`); text
    and bytes are not, nor a `range`, whose one form is short and whose items may be many."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray, memoryview, range))
