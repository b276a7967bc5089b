"""Ray Tune integration: `TuneSearch`, a `ray.tune.Callback` writing an experiment's trials.

It lives in `core.tune_search`, since transformers' `hyperparameter_search(backend="ray")`
writes its trials with the same callback; this is its path in the Ray folder.
"""

from trainwire.integrations.core.tune_search import TuneSearch

__all__ = ["TuneSearch"]
