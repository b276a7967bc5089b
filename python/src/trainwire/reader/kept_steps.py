"""The documented door to every step a run logged; it lives in `trainwire.journal.kept_steps`."""

from trainwire.journal.kept_steps import (
    VIEW_TAIL_BYTES,
    KeptStepsMerge,
    every_line,
    fold_latest_kept_steps,
    with_kept_steps,
)

__all__ = ["VIEW_TAIL_BYTES", "KeptStepsMerge", "every_line", "fold_latest_kept_steps", "with_kept_steps"]
