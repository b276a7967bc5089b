"""Plays writer scenarios (schemas/harness/v1/scenario.schema.json) through the real emitter."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trainwire.contract.clock import FakeClock
from trainwire.writer.run import Run
from trainwire.writer.sinks import MemorySink

__all__ = ["play"]

# Fields whose values are numbers: there the strings "NaN", "Infinity" and "-Infinity"
# stand for non-finite values. Elsewhere (names, paths, params) a string stays a string.
_NUMBER_FIELDS = frozenset(
    {"epoch", "loss", "learning_rate", "grad_norm", "samples_per_s", "tokens_per_s", "total_epochs", "value"}
)
# Maps whose every value is a number (metrics) or may be one (an `extra` action's fields).
_NUMBER_MAPS = frozenset({"metrics", "fields"})
_NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
# Run(...) arguments a `start` action may give, and start(...) ones.
_RUN_ARGS = ("producer", "heartbeat_interval_s", "stage")
_START_ARGS = ("total_steps", "total_epochs", "total_trials", "config", "world_size", "resumed_from")
# phase_start(...) arguments an action may give
_PHASE_ARGS = ("total", "unit", "cycle", "total_cycles", "trial")
#: every event -> the scenario action that writes it, so that a scenario can make any event of
#: the contract (a test requires every event here, each action in the player and the schema)
EVENT_ACTIONS: dict[str, str] = {
    "run.started": "start",
    "run.heartbeat": "heartbeat",
    "phase.progress": "phase_count",
    "train.rolled_back": "rollback",
    "phase.started": "phase_start",
    "phase.ended": "phase_end",
    "train.step": "step",
    "train.epoch": "epoch",
    "train.restarted": "oom_restart",
    "eval.completed": "eval",
    "checkpoint.saved": "checkpoint",
    "trial.started": "trial_start",
    "trial.ended": "trial_end",
    "stop.requested": "request_stop",
    "run.finished": "finish",
}


def play(scenario: Mapping[str, Any], *, run_id_prefix: str = "run") -> bytes:
    """Plays `scenario` with a fake clock and returns the bytes written.

    Each `start` action begins a run (its `run_id`, or `<run_id_prefix>-<n>` when it has
    none) that stays current until the next `start`; several runs append to one stream.
    An action other than `start`, `advance` and `raw` before the first `start`, or an
    unknown action, raises `ValueError`.
    """
    player = _Player(scenario, run_id_prefix)
    for index, action in enumerate(scenario["actions"]):
        try:
            player.do(action)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"action {index} ({action.get('do')!r}) is malformed: {exc!r}") from exc
    return player.sink.getvalue()


class _Player:
    def __init__(self, scenario: Mapping[str, Any], run_id_prefix: str) -> None:
        self.clock = FakeClock(scenario["start_time"])
        self.step_interval_s = scenario.get("step_interval_s", 1.0)
        self.run_id_prefix = run_id_prefix
        self.sink = MemorySink()
        self.runs = 0
        self.run: Run | None = None
        self.actions: dict[str, Callable[[dict[str, Any]], None]] = {
            "start": self.start,
            "advance": lambda a: self.clock.advance(a["seconds"]),
            "phase_start": lambda a: self.current.phase_started(a["phase"], **_given(a, *_PHASE_ARGS)),
            "phase_end": lambda a: self.current.phase_ended(a["phase"], a.get("status", "ok"), trial=a.get("trial")),
            "phase_count": lambda a: self.current.advance(a.get("n", 1)),
            "step": self.step,
            "epoch": lambda a: self.current.epoch(a["epoch"], a["step"], a.get("metrics"), trial=a.get("trial")),
            "eval": lambda a: self.current.eval(
                a["step"], a.get("metrics"), epoch=a.get("epoch"), split=a.get("split", "eval"), trial=a.get("trial")
            ),
            "checkpoint": lambda a: self.current.checkpoint(
                a["step"], a["path"], a.get("reason", "periodic"), trial=a.get("trial")
            ),
            "oom_restart": lambda a: self.current.restarted(
                "oom",
                step=a.get("step", 0),
                trial=a.get("trial"),
                **_given(a, "batch_size_from", "batch_size_to", "total_steps"),
            ),
            "rollback": lambda a: self.current.rolled_back(
                a["previous_step"],
                a["step"],
                checkpoint=a.get("checkpoint"),
                reason=a.get("reason"),
                trial=a.get("trial"),
            ),
            "trial_start": lambda a: self.current.trial_started(
                a["trial"], a.get("params"), a.get("attempt", 1), baseline=a.get("baseline", False)
            ),
            "trial_end": lambda a: self.current.trial_ended(
                a["trial"],
                a["status"],
                attempt=a.get("attempt", 1),
                metrics=a.get("metrics"),
                error=a.get("error"),
                **_given(a, "best", "accepted"),
            ),
            "request_stop": self.request_stop,
            "heartbeat": lambda a: self.current.heartbeat(),
            "fail": lambda a: self.current.finish("failed", error=(a["error_type"], a["message"])),
            "finish": lambda a: self.current.finish(
                a["status"],
                reason=a.get("reason"),
                metrics=a.get("metrics"),
                artifacts=a.get("artifacts"),
                checkpoint=a.get("checkpoint"),
                **_given(a, "exit_code"),
            ),
            "raw": lambda a: self.sink.write_raw(a["line"].encode("utf-8")),
            "extra": lambda a: self.current.emit(a["event"], **a.get("fields", {})),
        }

    @property
    def current(self) -> Run:
        if self.run is None:
            raise ValueError("the scenario reports an event before its first `start`")
        return self.run

    def do(self, action: Mapping[str, Any]) -> None:
        handler = self.actions.get(action["do"])
        if handler is None:
            raise ValueError(f"unknown scenario action {action['do']!r}")
        handler(_with_non_finite(action))

    def start(self, action: dict[str, Any]) -> None:
        self.runs += 1
        run_id = action.get("run_id") or f"{self.run_id_prefix}-{self.runs}"
        self.run = Run(
            run_id=run_id,
            sinks=[self.sink],
            step_interval_s=self.step_interval_s,
            clock=self.clock,
            rank=0,
            heartbeat_thread=False,  # the `heartbeat` action writes them, on the fake clock
            **{"heartbeat_interval_s": None, **_given(action, *_RUN_ARGS)},
        )
        self.run.start(provenance=False, **_given(action, *_START_ARGS))

    def request_stop(self, action: dict[str, Any]) -> None:
        if "criterion" in action:
            self.current.stop_for(action["criterion"], requested_by=action.get("requested_by"))
            return
        self.current.stop_requested(
            action["source"],
            signal=action.get("signal"),
            reason=action.get("reason"),
            requested_by=action.get("requested_by"),
        )

    def step(self, action: dict[str, Any]) -> None:
        optional = _given(
            action,
            "total_steps",
            "grad_norm",
            "samples_per_s",
            "tokens_per_s",
            "tokens_seen",
            "metrics",
            "memory",
            "trial",
        )
        self.current.step(
            action["step"],
            epoch=action.get("epoch"),
            loss=action.get("loss"),
            learning_rate=action.get("learning_rate"),
            **optional,
        )


def _given(action: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The named fields the action gives (absent ones stay absent, so they are omitted)."""
    return {name: action[name] for name in names if name in action}


def _with_non_finite(action: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _convert(key, value) for key, value in action.items()}


def _convert(key: str, value: Any) -> Any:
    if key in _NUMBER_FIELDS and isinstance(value, str):
        return _NON_FINITE.get(value, value)
    if key in _NUMBER_MAPS and isinstance(value, Mapping):
        return {name: _number(item) for name, item in value.items()}
    if key == "best" and isinstance(value, Mapping):  # {trial, metric, value}
        return _with_non_finite(value)
    return value


def _number(value: Any) -> Any:
    if isinstance(value, str):
        return _NON_FINITE.get(value, value)
    if isinstance(value, Mapping):
        return {name: _number(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_number(item) for item in value]
    return value
