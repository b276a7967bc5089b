#!/usr/bin/env python3
"""A minimal trainwire reader harness in plain Python: framing, JSON and the fold. It does not validate
lines against the schema: it skips any stream that is not clean, in-order lines of known events."""
import base64, json, sys

EVENTS = {"run.started", "run.heartbeat", "phase.started", "phase.ended", "train.step", "train.epoch", "train.restarted",
          "eval.completed", "checkpoint.saved", "trial.started", "trial.ended", "stop.requested", "run.finished"}
ENVELOPE = {"schema_version", "seq", "ts", "run_id", "event", "stage"}
STEP = ("step", "total_steps", "epoch", "loss", "learning_rate", "eta_s", "progress")
COPIED = {"run.started": ("total_steps", "heartbeat_interval_s"), "train.step": STEP, "train.epoch": ("epoch", "step")}
KEPT = {"eval.completed": ("last_eval", "step", "epoch", "split", "metrics"), "checkpoint.saved": ("last_checkpoint", "step", "path", "reason")}

def new_run(run_id):
    nulls = ("last_ts", "heartbeat_interval_s", "phase", *STEP, "last_eval", "last_checkpoint", "stage", "finished")
    return {"run_id": run_id, "status": "running", "events": 0, "last_seq": 0, "seq_gaps": [], "attempt": 1, "restarts": [],
            "stop_requested": False, "trials": {"count": 0, "best": None}, **dict.fromkeys(nulls)}

def apply(run, e):
    kind, pick = e["event"], lambda *names: {name: e[name] for name in names if name in e}
    run.update(events=run["events"] + 1, last_seq=e["seq"], last_ts=e["ts"], **pick("stage"), **pick(*COPIED.get(kind, ())))
    run["stop_requested"] |= kind == "stop.requested"
    if kind == "phase.started" or (kind == "phase.ended" and run["phase"] == e["phase"]):
        run["phase"] = e["phase"] if kind == "phase.started" else None
    elif kind == "train.restarted":
        run.update(attempt=e["attempt"], step=e["step"], eta_s=None, progress=None, **pick("total_steps"))
        run["restarts"].append(pick("reason", "previous_step", "step"))
    elif kind in KEPT:
        run[KEPT[kind][0]] = pick(*KEPT[kind][1:])
    elif kind in ("trial.started", "trial.ended"):
        run["trials"] = {"count": max(run["trials"]["count"], e["trial"]), "best": e.get("best", run["trials"]["best"])}
    elif kind == "run.finished":
        run.update(status=e["status"], finished={key: value for key, value in e.items() if key not in ENVELOPE})

def read(data):  # the state, or None for a stream this harness cannot judge
    *lines, tail = data.split(b"\n")
    runs = {}
    for raw in lines:
        try:  # not UTF-8, not strict JSON (NaN), not an object, a field of the wrong type: all land in except
            e = json.loads(raw.decode("utf-8"), parse_constant=lambda name: 1 / 0)
            run = runs.get(e["run_id"]) or {"last_seq": 0, "finished": None}
            if not (e["event"] in EVENTS and type(e["schema_version"]) is int and e["schema_version"] == 1 and len(raw) <= 1 << 20
                    and type(e["seq"]) is int and e["seq"] == run["last_seq"] + 1 and run["finished"] is None
                    and isinstance(e["ts"], str) and isinstance(e["run_id"], str)):
                raise ValueError("not a clean line")
        except Exception:
            return None
        apply(runs.setdefault(e["run_id"], new_run(e["run_id"])), e)
    return {"runs": list(runs.values()), "lines": len(lines), "consumed_bytes": len(data) - len(tail),
            "partial_tail_bytes": len(tail), "unknown_events": 0, "diagnostics": []}

for request in map(json.loads, sys.stdin):
    if request["cmd"] == "stop":
        break
    answer = {"version": 1, "roles": ["reader"], "implementation": {"name": "minimal-example", "language": "python", "version": "1"}}
    if request["cmd"] != "start":  # a reader only: writes are skipped too
        state = read(b"".join(map(base64.b64decode, request["chunks"]))) if "chunks" in request and "now" not in request else None
        skip = {"skipped": True, "message": "only clean streams of known events, without liveness"}
        answer = {"seq": request["seq"], **({"state": state} if state else skip)}
    print(json.dumps(answer), flush=True)
