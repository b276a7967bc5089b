"""What every trainer integration's hooks share: they never raise into training, and they
read numbers out of whatever the framework hands them (tensors, numpy scalars)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from trainwire.writer.encoding import to_scalar

__all__ = ["number", "shielded"]


def number(value: Any) -> float | int | None:
    """The value as a number (tensors and numpy scalars included), or None."""
    if not isinstance(value, (int, float)):
        value = to_scalar(value)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def shielded(hook: Callable[..., None]) -> Callable[..., None]:
    """Writer rule 3: a failure in the stream's bookkeeping never raises into training.

    The failure is logged once and the hook is disabled: its state may be half updated.
    The hook's owner keeps the `_failed_hooks` set.
    """

    @functools.wraps(hook)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> None:
        if hook.__name__ in self._failed_hooks:
            return
        try:
            hook(self, *args, **kwargs)
        except Exception:
            if hook.__name__ not in self._failed_hooks:
                self._failed_hooks.add(hook.__name__)
                # under the integration's own logger, where its users look
                logging.getLogger(type(self).__module__).warning(
                    "trainwire: %s failed; training goes on", hook.__name__, exc_info=True
                )

    return guarded
