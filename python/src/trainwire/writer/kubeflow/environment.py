"""When a run reports to its TrainJob: the variables Kubeflow Trainer injects into every
trainer container (its `TrainJobStatus` plugin), the opt-outs, and the one reporter per job.

A run reports when the three variables are set, it is global rank 0, neither
`TRAINWIRE_KUBEFLOW=0` nor `Run(kubeflow=False)` turns it off, and no other process of the job
claimed the reporting: the first run that reports puts its pid in `TRAINWIRE_KUBEFLOW_REPORTER`,
which the processes it starts (a search's workers, a DataLoader's) inherit, and takes it away
when it closes. `TRAINWIRE_KUBEFLOW_INTERVAL_S` sets the seconds between two posts (default 5).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass

__all__ = [
    "CA_CERT_VARIABLE",
    "INTERVAL_VARIABLE",
    "OPT_OUT_VARIABLE",
    "REPORTER_VARIABLE",
    "TOKEN_VARIABLE",
    "URL_VARIABLE",
    "StatusEndpoint",
    "claim_reporting",
    "claimed_elsewhere",
    "endpoint_from",
    "interval_from",
    "release_reporting",
    "reporting_wanted",
]

logger = logging.getLogger("trainwire.writer.kubeflow")

URL_VARIABLE = "KUBEFLOW_TRAINER_SERVER_URL"
CA_CERT_VARIABLE = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
TOKEN_VARIABLE = "KUBEFLOW_TRAINER_SERVER_TOKEN"
OPT_OUT_VARIABLE = "TRAINWIRE_KUBEFLOW"
INTERVAL_VARIABLE = "TRAINWIRE_KUBEFLOW_INTERVAL_S"
REPORTER_VARIABLE = "TRAINWIRE_KUBEFLOW_REPORTER"
DEFAULT_INTERVAL_S = 5.0
_OFF = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class StatusEndpoint:
    """Where a TrainJob takes its status: the URL, the CA file to verify it with, and the file
    holding the bearer token (read again for each post: it rotates). Never the token itself."""

    url: str
    ca_file: str
    token_file: str


def endpoint_from(environ: Mapping[str, str]) -> StatusEndpoint | None:
    """The endpoint the variables name; None unless all three are set."""
    url, ca_file, token_file = (environ.get(name, "") for name in (URL_VARIABLE, CA_CERT_VARIABLE, TOKEN_VARIABLE))
    if not (url and ca_file and token_file):
        return None
    return StatusEndpoint(url, ca_file, token_file)


def reporting_wanted(asked: bool | None, environ: Mapping[str, str]) -> bool:
    """`Run(kubeflow=...)`: False never, True or None when `TRAINWIRE_KUBEFLOW` is not off."""
    if asked is False:
        return False
    return environ.get(OPT_OUT_VARIABLE, "").strip().lower() not in _OFF


def interval_from(environ: Mapping[str, str]) -> float:
    """Seconds between two posts besides those at the start, evaluations and the end."""
    text = environ.get(INTERVAL_VARIABLE)
    if not text:
        return DEFAULT_INTERVAL_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not (seconds >= 0 and seconds < float("inf")):
        logger.warning(
            "trainwire: %s=%r is not a number of seconds; %s used", INTERVAL_VARIABLE, text, DEFAULT_INTERVAL_S
        )
        return DEFAULT_INTERVAL_S
    return seconds


_claim_lock = threading.Lock()
_claimed = False  # a run of this process reports now


def claimed_elsewhere(environ: Mapping[str, str]) -> bool:
    """True when another process (the one that started this one) reports for the job."""
    owner = environ.get(REPORTER_VARIABLE)
    return bool(owner) and owner != str(os.getpid())


def claim_reporting(environ: MutableMapping[str, str]) -> bool:
    """True when this run may report for the job, which it then claims; False when another
    process reports, or another run of this one does now."""
    global _claimed
    with _claim_lock:
        if _claimed or claimed_elsewhere(environ):
            return False
        _claimed = True
        environ[REPORTER_VARIABLE] = str(os.getpid())
        return True


def release_reporting(environ: MutableMapping[str, str]) -> None:
    """Takes the claim away (a later run, or a process started later, may report)."""
    global _claimed
    with _claim_lock:
        _claimed = False
        if environ.get(REPORTER_VARIABLE) == str(os.getpid()):
            del environ[REPORTER_VARIABLE]
