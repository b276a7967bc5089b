"""Which process of a distributed run this is; only global rank 0 writes (writer rule 4)."""

from __future__ import annotations

import os
import sys

__all__ = ["global_rank"]


def global_rank() -> int:
    """The global rank: torch.distributed's when it is initialised, else `$RANK`, else 0.

    Never imports torch: if the program has not imported `torch.distributed`, no
    process group can exist.
    """
    dist = sys.modules.get("torch.distributed")
    if dist is not None:
        try:
            if dist.is_available() and dist.is_initialized():
                return int(dist.get_rank())
        except Exception:  # a half-initialised backend: fall back to the environment
            pass
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0
