"""Share a stop decision across the ranks of a torch.distributed job.

A stop decided on one rank only makes the others wait forever in the next collective:
every rank must call these functions at the same point, the same number of times.
"""

from __future__ import annotations

__all__ = ["all_ranks_agree", "all_ranks_max", "is_distributed"]


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
