// The page's decoding worker: reads one stream with the package's reader and series store, off
// the page's thread, and posts the latest run's state, panel events and joined history: the
// first lines at once (the first chart), then at most every FLUSH_MS, so a 200 MB stream never
// freezes the page while it loads. A run with an opening (opening.ts) starts from it: its first
// update is posted before any of the stream is read, and only the stream past it is read.
import { fromFetch } from "../src/browser.js";
import { chartList } from "../src/charts.js";
import { type Line, StreamReader } from "../src/index.js";
import type { RunStarted } from "../src/types.js";
import { type FeedMessage, type FollowRequest, VIEW_EVENTS } from "./feed-messages.js";
import { chainOf, joinedHistory, type RunOrigin } from "./lineage.js";
import { fetchOpening, readerFrom } from "./opening.js";
import { StepRate } from "./rate.js";

/** At most this often an update of a live run: each costs the page a redraw of every chart. */
const FLUSH_MS = 250;
/** While a big stream loads (more than BULK_BYTES since the last update), once a second is enough. */
const BULK_FLUSH_MS = 1000;
const BULK_BYTES = 4 << 20;
/** How often a run's liveness is decided again when no line comes. */
const STATE_MS = 2000;

const scope = globalThis as unknown as {
  postMessage(message: FeedMessage): void;
  onmessage: ((message: MessageEvent<FollowRequest>) => void) | null;
};

scope.onmessage = (message) => {
  scope.onmessage = null; // one stream per worker
  void follow(message.data);
};

function originOf(event: RunStarted): RunOrigin {
  const from = event.resumed_from;
  return { resumed: from !== undefined && from !== null, from: from?.run_id ?? null, step: from?.step ?? null };
}

async function follow(request: FollowRequest): Promise<void> {
  const headers = { "X-Trainwire-Token": request.token };
  const opening = await fetchOpening(request.openingUrl, headers);
  const opened = opening === undefined ? undefined : readerFrom(opening);
  let reader = opened ?? new StreamReader({ series: true });
  let origins = new Map<string, RunOrigin>();
  let rates = new Map<string, StepRate>();
  let pending: Line[] = [];
  let reset = false;
  let shown: string | undefined;
  let postedAt = Number.NEGATIVE_INFINITY; // the first lines go at once
  let postedBytes = 0;
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    postedAt = performance.now();
    postedBytes = reader.consumedBytes;
    const state = reader.latestRun({ now: new Date() });
    if (state === undefined) return;
    const runId = state.run_id;
    const chain = chainOf(runId, origins);
    const histories = chain.flatMap((id) => reader.series?.run(id) ?? []);
    scope.postMessage({
      kind: "update",
      reset: reset || runId !== shown,
      events: pending.filter((event) => event.run_id === runId),
      state,
      rate: rates.get(runId)?.rate ?? null,
      chain,
      charts: histories.length > 0 ? chartList([[runId, joinedHistory(histories, origins)]]) : [],
      bytes: reader.consumedBytes,
    });
    pending = [];
    reset = false;
    shown = runId;
  };

  const panelEvent = (event: Line): void => {
    if (event.event === "run.started") origins.set(event.run_id, originOf(event));
    pending.push(event);
  };
  if (opened !== undefined && opening !== undefined) {
    for (const event of opening.events) panelEvent(event);
    flush(); // the first chart, before any of the stream is read
  }

  setInterval(() => {
    const state = shown === undefined ? undefined : reader.run(shown, { now: new Date() });
    if (state !== undefined) scope.postMessage({ kind: "state", state });
  }, STATE_MS);
  const source = fromFetch(request.url, {
    headers,
    offset: reader.consumedBytes, // past the opening: a Range request
    pollIntervalMs: request.pollIntervalMs,
    // a stream not there is waited for; the page says so once
    onError: (error, failures) => {
      if (error.status === 404 && failures === 1) scope.postMessage({ kind: "missing" });
    },
    onReset: () => {
      reader = new StreamReader({ series: true });
      origins = new Map();
      rates = new Map();
      pending = [];
      reset = true;
    },
  });
  try {
    for await (const chunk of source) {
      for (const item of reader.feed(chunk)) {
        if (item.kind === "diagnostic") continue;
        const rate = rates.get(item.event.run_id) ?? new StepRate();
        rates.set(item.event.run_id, rate);
        rate.take(item);
        if (item.kind === "event" && VIEW_EVENTS.has(item.event.event)) panelEvent(item.event);
      }
      // the first lines at once (the first chart), then at most every FLUSH_MS
      const every = reader.consumedBytes - postedBytes > BULK_BYTES ? BULK_FLUSH_MS : FLUSH_MS;
      const wait = postedAt + every - performance.now();
      if (wait <= 0) flush();
      else if (!scheduled) {
        scheduled = true;
        setTimeout(flush, wait);
      }
    }
  } catch (error) {
    scope.postMessage({ kind: "failed", message: String(error) });
  }
}
