"""The seal of a runs cache file: an HMAC-SHA256 of its body under a key only this user can
read (`<cache directory>/key`, 32 random bytes, mode 0600, owned by the user). A cache whose
seal holds was written by this user's trainwire of this version, after its checks: its
entries are not checked again. Any other cache (no seal, another key, a key file anyone else
could have written) is still read, each entry held to the files' own checks."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from trainwire._version import __version__

__all__ = ["seal", "sealed_by_us"]

_KEY_FILE = "key"
_KEY_BYTES = 32


def _key(directory: Path, create: bool) -> bytes | None:
    """The user's key in `directory`, made when `create` and absent; None when it is not one
    only this user could have written."""
    path = directory / _KEY_FILE
    if create and not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(secrets.token_bytes(_KEY_BYTES))
        except OSError:
            return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        found = os.fstat(file.fileno())
        owned = not hasattr(os, "geteuid") or found.st_uid == os.geteuid()
        if not stat.S_ISREG(found.st_mode) or not owned or found.st_mode & 0o077 or found.st_size != _KEY_BYTES:
            return None
        return file.read(_KEY_BYTES)


def _mac(key: bytes, body: bytes) -> str:
    return hmac.new(key, __version__.encode() + b"\n" + body, hashlib.sha256).hexdigest()


def seal(directory: Path, body: bytes) -> bytes:
    """`body` with its seal as a first line (`trainwire-seal <hex>`), or `body` alone when there is no key."""
    key = _key(directory, create=True)
    return body if key is None else b"trainwire-seal " + _mac(key, body).encode() + b"\n" + body


def sealed_by_us(directory: Path, data: bytes) -> tuple[bytes, bool]:
    """The body of a cache file's `data`, and whether its seal is this user's."""
    if not data.startswith(b"trainwire-seal "):
        return data, False
    line, _, body = data.partition(b"\n")
    key = _key(directory, create=False)
    mac = line[len(b"trainwire-seal ") :].decode("ascii", errors="replace")
    return body, key is not None and hmac.compare_digest(mac, _mac(key, body))
