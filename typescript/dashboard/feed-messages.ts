// What the page's decoding worker (worker.ts) tells the page about one stream (feed.ts).
import type { ChartData } from "../src/charts.js";
import { VIEW_EVENTS, type ViewEventName } from "../src/generated/contract.js";
import type { Line, RunState } from "../src/index.js";

/** The page asks the worker to follow one stream. */
export interface FollowRequest {
  url: string;
  /** The run's opening (opening.ts): the state and series at an offset, so only the stream past it is read. */
  openingUrl: string;
  token: string;
  pollIntervalMs: number;
}

/** The events a panel of the run view shows (each event schema's `x-trainwire-view-event`); steps and heartbeats reach it through the state and series. */
export { VIEW_EVENTS } from "../src/generated/contract.js";

/** An event of `VIEW_EVENTS`: the panels' switch covers these and no other. */
export type ViewLine = Extract<Line, { event: ViewEventName }>;

export function isViewLine(event: Line): event is ViewLine {
  return VIEW_EVENTS.has(event.event);
}

export type FeedMessage =
  /** The server has no such stream (yet): the worker keeps asking. */
  | { kind: "missing" }
  /** The latest run after the lines read since the last message. */
  | {
      kind: "update";
      /** The stream was replaced or truncated, or a newer run started: the run view starts afresh. */
      reset: boolean;
      /** The latest run's events that a panel shows (VIEW_EVENTS: steps and heartbeats are in the state and series). */
      events: Line[];
      state: Readonly<RunState> | undefined;
      /** Steps per second over the current attempt. */
      rate: number | null;
      /** The run ids drawn as one curve: the latest run and the runs it resumed, oldest first. */
      chain: string[];
      /**
       * The charts of their joined history (lineage.ts), as `chartList` gives them: a few flat
       * arrays per curve, cheap for the page to take (a series store's buckets are not).
       */
      charts: ChartData[];
      /** Bytes read so far. */
      bytes: number;
    }
  /** The latest run's state at the current time (a silent run turns stale without new lines). */
  | { kind: "state"; state: Readonly<RunState> }
  /** The stream cannot be read (a permanent error). */
  | { kind: "failed"; message: string };
