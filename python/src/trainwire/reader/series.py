"""The series store's documented door for readers; it lives in `trainwire.lines.series`,
where the writer's journal builds its snapshot with it."""

from trainwire.lines.series import (
    DEFAULT_MAX_MARKERS,
    DEFAULT_MAX_POINTS,
    MAX_TRIAL_CURVES,
    STEP_SERIES,
    RunSeries,
    Series,
    SeriesStore,
)

__all__ = [
    "DEFAULT_MAX_MARKERS",
    "DEFAULT_MAX_POINTS",
    "MAX_TRIAL_CURVES",
    "STEP_SERIES",
    "RunSeries",
    "Series",
    "SeriesStore",
]
