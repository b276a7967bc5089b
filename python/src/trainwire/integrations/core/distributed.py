"""Share a stop decision across the ranks of a torch.distributed job.

A stop decided on one rank only makes the others wait forever in the next collective:
every rank must call these functions at the same point, the same number of times.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainwire.stop import StopControl, StopRequest

__all__ = ["agreed_stop", "all_ranks_agree", "all_ranks_max", "is_distributed", "local_stop_code"]

# A stop decision travels between ranks as the largest code: 1 + its index here.
_STOP_KINDS: tuple[tuple[str, str | None], ...] = (
    ("control_file", None),
    ("api", None),
    ("signal", "SIGBREAK"),
    ("signal", "SIGINT"),
    ("signal", "SIGTERM"),
)
_STOP_CODES = {kind: code for code, kind in enumerate(_STOP_KINDS, start=1)}


def is_distributed() -> bool:
    """True when a torch.distributed process group is initialised."""
    try:
        import torch.distributed as dist
    except ImportError:
        return False
    return bool(dist.is_available() and dist.is_initialized())


def all_ranks_max(value: int) -> int:
    """The largest `value` over all ranks (an all-reduce MAX); `value` itself when not distributed."""
    if not is_distributed():
        return value
    import torch
    import torch.distributed as dist

    # NCCL only reduces CUDA tensors; gloo and others take CPU ones.
    device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")
    tensor = torch.tensor([value], dtype=torch.int64, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return int(tensor.item())


def all_ranks_agree(flag: bool) -> bool:
    """True on every rank when `flag` is True on any rank."""
    return bool(all_ranks_max(int(flag)))


def local_stop_code(stop: StopControl) -> int:
    """Polls `stop` on this rank: 0 for no stop, else the code of the request's kind."""
    found = stop.check()
    if found is None:
        return 0
    return _STOP_CODES.get((found.source, found.signal), _STOP_CODES[("api", None)])


def agreed_stop(stop: StopControl, code: int | None = None) -> StopRequest | None:
    """The stop every rank agrees on at this point (a collective when distributed), or None.

    `code` is this rank's `local_stop_code` when the caller already has it. A rank that
    learns of the stop from another takes that rank's request as its own (written once,
    by the run on rank 0, with the source the asking rank saw).
    """
    shared = all_ranks_max(local_stop_code(stop) if code is None else code)
    if not shared:
        return None
    found = stop.honoured
    if found is None:
        source, signal_name = _STOP_KINDS[shared - 1]
        found = stop.request(source, signal=signal_name)  # type: ignore[arg-type]
    return found
