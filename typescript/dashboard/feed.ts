// The page's side of the decoding worker: one worker per followed stream, ended with the view.
import { openingUrl, streamUrl } from "./dom.js";
import type { FeedMessage, FollowRequest } from "./feed-messages.js";

export type { FeedMessage };

const WORKER_URL = "assets/worker.js";

/** Follows the stream of run `key` in a worker until `signal` aborts; `onMessage` gets what it reads. */
export function follow(
  key: string,
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
  // the worker's own address is under assets/: it is given absolute ones
  const request: FollowRequest = {
    url: new URL(streamUrl(key), location.href).href,
    openingUrl: new URL(openingUrl(key), location.href).href,
    token,
    pollIntervalMs,
  };
  worker.postMessage(request);
}
