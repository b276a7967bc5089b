"""The path `trainwire.integrations.distributed` a plain torch.distributed loop imports: the
ranks' agreed stop, kept in `core.distributed` since every framework's lifecycle uses it."""

from trainwire.integrations.core.distributed import (
    agreed_stop,
    all_ranks_agree,
    all_ranks_max,
    is_distributed,
    local_stop_code,
)

__all__ = ["agreed_stop", "all_ranks_agree", "all_ranks_max", "is_distributed", "local_stop_code"]
