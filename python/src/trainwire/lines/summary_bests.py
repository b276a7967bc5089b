"""The bests of a run's summary: which way each series is better (the declared objective's
goal, else the name rules), and, in a search, a trial's values counted only once the trial
ended `succeeded`. A piece of a stream that may begin inside a trial (a row's tail) holds the
values before its first trial event until that event says whose they were."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__all__ = ["Bests", "is_lower_better"]

_LOWER_IS_BETTER = ("loss", "error", "perplexity", "ppl", "wer", "cer")

#: the trial of the values a piece of a stream holds before its first trial event: maybe one
#: that began before the piece, so they wait for the `trial.ended` that tells whose they were
_UNSEEN_TRIAL = -1

#: a best: `{value, step}`, and `trial` for one reached in a trial
Best = dict[str, Any]


@lru_cache(maxsize=4096)  # a run has a handful of series names, asked about on every step
def is_lower_better(name: str) -> bool:
    """Whether the best value of the series `name` is its lowest (losses, error rates)."""
    return name.lower().rstrip("_").endswith(_LOWER_IS_BETTER)


class Bests:
    """The bests of one run. `best` is what counts (the summary's fold updates it in place on
    its fast paths, outside trials only); `open_trial` the trial whose lines come now."""

    def __init__(self, *, starts_in_trial: bool = False) -> None:
        self.best: dict[str, Best] = {}
        #: the trial whose lines these are (the last started and not ended), in a search
        self.open_trial: int | None = _UNSEEN_TRIAL if starts_in_trial else None
        #: (name, lower is better) of the run's declared objective
        self.objective: tuple[str, bool] | None = None
        #: each open trial's bests, counted in `best` only once it ends `succeeded`
        self._trial_bests: dict[int, dict[str, Best]] = {}
        #: a piece of a search's stream: the values before its first trial event are some
        #: trial's, so they count only once a `trial.ended` says whose
        self.unseen_in_search = False

    def lower(self, name: str) -> bool:
        """Whether lower values of series `name` are better: its declared goal, else the name rules."""
        objective = self.objective
        return objective[1] if objective is not None and objective[0] == name else is_lower_better(name)

    def has_best(self, name: str) -> bool:
        """Whether series `name` keeps a best: a lower-is-better name, or the declared objective."""
        return is_lower_better(name) or (self.objective is not None and self.objective[0] == name)

    def observe(self, name: str, number: float, step: int | None, trial: Any = None) -> None:
        """A finite value of series `name`, of `trial` (else of the open trial, if any)."""
        trial = trial if isinstance(trial, int) and not isinstance(trial, bool) else self.open_trial
        # in a search a value counts once its trial ended `succeeded` (`trial_ended`)
        bests = self.best if trial is None else self._trial_bests.setdefault(trial, {})
        current = bests.get(name)
        if current is None or (number < current["value"] if self.lower(name) else number > current["value"]):
            bests[name] = (
                {"value": number, "step": step} if trial is None else {"value": number, "step": step, "trial": trial}
            )

    def run_started(self) -> None:
        """The run's beginning: no trial is open."""
        self._settle_unseen_trial(None)

    def trial_started(self, trial: int) -> None:
        self._settle_unseen_trial(None)
        self.open_trial = trial
        self._trial_bests.pop(trial, None)  # a new attempt of the trial starts over

    def trial_ended(self, trial: int, *, succeeded: bool) -> None:
        self._settle_unseen_trial(trial)
        found = self._trial_bests.pop(trial, {})
        if succeeded:  # failed or pruned: its values are no best of the search
            self._merge(self.best, found)
        if self.open_trial == trial:
            self.open_trial = None

    def run_finished(self) -> None:
        """The run's own final metrics count as they are."""
        self.open_trial = None

    def counted(self) -> dict[str, Best]:
        """The run's bests; with the values of a piece of a stream that met no trial event yet
        (a run without trials, as far as the piece tells), unless the piece is a search's."""
        if self.open_trial != _UNSEEN_TRIAL or _UNSEEN_TRIAL not in self._trial_bests or self.unseen_in_search:
            return self.best
        bests = dict(self.best)
        self._merge(bests, _outside_trials(self._trial_bests[_UNSEEN_TRIAL]))
        return bests

    def _settle_unseen_trial(self, trial: int | None) -> None:
        """At the first trial event of a piece of a stream: the values before it were `trial`'s
        (a `trial.ended`: they count if it succeeded), else outside any trial (they count)."""
        if self.open_trial != _UNSEEN_TRIAL:
            return
        unseen = self._trial_bests.pop(_UNSEEN_TRIAL, {})
        if trial is None:
            self._merge(self.best, _outside_trials(unseen))
        else:
            self._trial_bests[trial] = {name: {**best, "trial": trial} for name, best in unseen.items()}
        self.open_trial = trial

    def _merge(self, into: dict[str, Best], found: Mapping[str, Best]) -> None:
        for name, best in found.items():
            current = into.get(name)
            lower = self.lower(name)
            if current is None or (best["value"] < current["value"] if lower else best["value"] > current["value"]):
                into[name] = dict(best)


def _outside_trials(bests: Mapping[str, Best]) -> dict[str, Best]:
    return {name: {"value": best["value"], "step": best["step"]} for name, best in bests.items()}
