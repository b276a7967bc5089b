"""A search tool with `--progress {plain,json}`: `python examples/optimise_tool.py [--progress json]`.

It scores a baseline, then runs `--cycles` search cycles of `--trials` trials each; a trial
climbs for a few steps from the best parameters so far and is accepted when it beats them.
People read its printed lines; with `--progress json` standard output is a trainwire NDJSON
stream (the printed lines and logging go to standard error), with `--progress-file PATH` the
stream goes to PATH. In the stream: the baseline is `trial.started` with `baseline: true`, each
cycle a `search` phase with `cycle`/`total_cycles`, each trial's decision `trial.ended.accepted`.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys

import trainwire

logger = logging.getLogger("optimise")


def score(x: float) -> float:
    """What the search maximises (1 at x = 0.7)."""
    return 1.0 - (x - 0.7) ** 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="optimise_tool", description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2)
    parser.add_argument("--trials", type=int, default=3, help="trials per cycle")
    parser.add_argument("--steps", type=int, default=4, help="steps per trial")
    parser.add_argument("--seed", type=int, default=0)
    trainwire.progress_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(name)s: %(message)s")
    rng = random.Random(args.seed)
    total_trials = 1 + args.cycles * args.trials

    with trainwire.run_from_arguments(args, step_interval_s=0, heartbeat_interval_s=None) as run:
        run.start(total_trials=total_trials, config={"cycles": args.cycles, "trials": args.trials, "seed": args.seed})
        best_x = 0.0
        with run.trial(1, params={"x": best_x}, baseline=True) as trial:
            best = score(best_x)
            run.eval(0, {"score": best})
            trial.metrics = {"score": best}
        print(f"baseline: x={best_x:.3f} score={best:.4f}")
        number = 1
        for cycle in range(1, args.cycles + 1):
            with run.phase("search", cycle=cycle, total_cycles=args.cycles):
                for _ in range(args.trials):
                    number += 1
                    x = best_x + rng.uniform(-0.4, 0.4)
                    with run.trial(number, params={"x": round(x, 6)}) as trial:
                        for step in range(1, args.steps + 1):
                            x += 0.5 * (0.7 - x) * rng.random()  # one climbing step
                            run.step(step, loss=1.0 - score(x))
                        accepted = score(x) > best
                        trial.metrics, trial.accepted = {"score": score(x)}, accepted
                        if accepted:
                            best_x, best = x, score(x)
                            trial.best = {"trial": number, "metric": "score", "value": best}
                    verdict = "accepted" if accepted else "rejected"
                    print(f"cycle {cycle} trial {number}: x={x:.3f} score={score(x):.4f} {verdict}")
                    logger.info("best so far %.4f", best)
        print(f"best: x={best_x:.3f} score={best:.4f}")
    return run.exit_code or 0


if __name__ == "__main__":
    sys.exit(main())
