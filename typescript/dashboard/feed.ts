// The page's side of the decoding worker: one worker per followed stream, ended with the view.
import type { FeedMessage, FollowRequest } from "./feed-messages.js";

export type { FeedMessage };

const WORKER_URL = "assets/worker.js";

/** Follows the stream at `url` in a worker until `signal` aborts; `onMessage` gets what it reads. */
export function follow(
  url: string,
  token: string,
  pollIntervalMs: number,
  signal: AbortSignal,
  onMessage: (message: FeedMessage) => void,
): void {
  const worker = new Worker(WORKER_URL);
  worker.addEventListener("message", (event: MessageEvent<FeedMessage>) => {
    if (!signal.aborted) onMessage(event.data);
  });
  worker.addEventListener("error", (event) => onMessage({ kind: "failed", message: event.message }));
  signal.addEventListener("abort", () => worker.terminate(), { once: true });
  // the worker's own address is under assets/: it is given the stream's absolute one
  const request: FollowRequest = { url: new URL(url, location.href).href, token, pollIntervalMs };
  worker.postMessage(request);
}
