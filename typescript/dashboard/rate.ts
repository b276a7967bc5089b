// Steps per second over the current attempt: restored steps of an earlier attempt must not
// make the rate look better (the same rule as the ETA's).
import type { DecodedLine } from "../src/index.js";

export class StepRate {
  #start: { step: number; elapsed: number } | null = null;
  rate: number | null = null;

  take(item: DecodedLine): void {
    if (item.kind !== "event") return;
    const event = item.event;
    if (event.event === "train.restarted" || event.event === "run.started") {
      this.#start = null;
      this.rate = null;
    } else if (event.event === "train.step") {
      if (this.#start === null) this.#start = { step: event.step, elapsed: event.elapsed_s };
      else if (event.elapsed_s > this.#start.elapsed)
        this.rate = (event.step - this.#start.step) / (event.elapsed_s - this.#start.elapsed);
    }
  }
}
