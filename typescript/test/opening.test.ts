// Opening a run at once: a reader going on from a saved state and series store gives what reading
// the whole stream gives; the dashboard's opening is checked before it is trusted.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { canonicalStringify, type Line, SeriesStore, StreamReader } from "trainwire";
import { fromFetch } from "trainwire/browser";
import { VIEW_EVENTS } from "../dashboard/feed-messages.js";
import { checkOpening, fetchOpening, OPENING_VERSION, readerFrom } from "../dashboard/opening.js";
import { SUITE_DIR } from "./helpers.js";
import { resource, withRangeServer } from "./range-server.js";

const NOW = new Date("2026-12-01T12:00:00Z");

/** A resumed run (phases, a stop), a sweep with a restart inside a trial, and a search with phases. */
const STREAM = new TextEncoder().encode(
  ["resumed-run", "sweep-restart-in-trial", "hyperparameter-search"]
    .map((id) => readFileSync(path.join(SUITE_DIR, "cases", id, "stream.ndjson"), "utf8"))
    .join(""),
);

/** What reading `bytes` into `reader` leaves for a panel: its panel events, in stream order. */
function panelEvents(reader: StreamReader, bytes: Uint8Array): Line[] {
  const events: Line[] = [];
  for (const item of reader.feed(bytes))
    if (item.kind === "event" && VIEW_EVENTS.has(item.event.event)) events.push(item.event);
  return events;
}

/** Through JSON, as the opening crosses the wire. */
function wire<T>(value: T): T {
  return JSON.parse(canonicalStringify(value)) as T;
}

/** The opening the server gives once `bytes` of the stream are read: every run's state, series and panel events. */
function openingAt(bytes: number): Record<string, unknown> {
  const reader = new StreamReader({ series: true });
  const events = panelEvents(reader, STREAM.subarray(0, bytes));
  const state = reader.toState();
  return wire({
    opening_version: OPENING_VERSION,
    offset: state.consumed_bytes,
    state,
    series: reader.series?.toJSON(),
    events,
  });
}

type Path = (string | number)[];
const LEFT_OUT = Symbol("left out");

/** `answer` with the value at `where` replaced by `value` (or left out). */
function changed(answer: unknown, where: Path, value: unknown): unknown {
  let at = answer as Record<string | number, unknown>;
  for (const key of where.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = where.at(-1) as string | number;
  if (value === LEFT_OUT) delete at[last];
  else at[last] = value;
  return answer;
}

function whole(): { reader: StreamReader; events: Line[] } {
  const reader = new StreamReader({ series: true });
  return { reader, events: panelEvents(reader, STREAM) };
}

describe("StreamReader going on from a state and a series store", () => {
  it("gives the same state, series and panel events as reading the whole stream, from any cut", () => {
    const expected = whole();
    const cuts = [...STREAM.keys()].filter((index) => index % 37 === 0 || STREAM[index - 1] === 0x0a);
    assert.ok(cuts.length > 50);
    for (const cut of cuts) {
      const opening = checkOpening(openingAt(cut));
      assert.ok(opening !== undefined, `cut ${cut}`);
      const reader = new StreamReader({ resume: opening.state, series: SeriesStore.fromJSON(opening.series) });
      const events = [...opening.events, ...panelEvents(reader, STREAM.subarray(opening.offset))];
      assert.equal(
        canonicalStringify(reader.toState({ now: NOW })),
        canonicalStringify(expected.reader.toState({ now: NOW })),
        `state, cut ${cut}`,
      );
      assert.equal(
        canonicalStringify(reader.series?.toJSON()),
        canonicalStringify(expected.reader.series?.toJSON()),
        `series, cut ${cut}`,
      );
      for (const runId of expected.reader.series?.runIds() ?? [])
        assert.deepEqual(reader.series?.run(runId)?.names(), expected.reader.series?.run(runId)?.names());
      assert.deepEqual(events, expected.events, `events, cut ${cut}`);
    }
  });

  it("adds to the store it is given", () => {
    const store = new SeriesStore();
    const reader = new StreamReader({ series: store });
    reader.feed(STREAM);
    assert.equal(reader.series, store);
    assert.deepEqual(store.runIds(), ["session-1", "session-2", "sweep", "search"]);
  });
});

describe("the dashboard's opening", () => {
  const middle = STREAM.indexOf(0x0a, STREAM.length / 2) + 1;

  it("is taken when it is whole and of a known version", () => {
    const opening = checkOpening(openingAt(middle));
    assert.equal(opening?.offset, middle);
    assert.ok((opening?.events.length ?? 0) > 3);
  });

  it("is refused when anything in it is off", () => {
    const loss = ["series", "runs", 0, "series", "loss"];
    const breakages: [string, Path, unknown][] = [
      ["an unknown version", ["opening_version"], OPENING_VERSION + 1],
      ["no version", ["opening_version"], LEFT_OUT],
      ["a negative offset", ["offset"], -1],
      ["an offset that is not the state's", ["offset"], middle + 1],
      ["a fractional offset", ["offset"], middle + 0.5],
      ["a state not of the schema", ["state", "runs", 0, "status"], "exploded"],
      ["no state", ["state"], null],
      ["other series bounds", ["series", "max_points"], 10],
      ["a run without markers", ["series", "runs", 0, "markers"], LEFT_OUT],
      ["a marker of an unknown kind", ["series", "runs", 0, "markers", 0, "kind"], "boom"],
      ["a point that is not a number", [...loss, "buckets", 0, 2, 2], "1"],
      ["a bucket of two fields", [...loss, "buckets", 0], [1, 1]],
      ["a bucket size of 0", [...loss, "bucket_size"], 0],
      ["series as a list", ["series", "runs", 0, "series"], []],
      ["events as an object", ["events"], {}],
      ["a step among the events", ["events", 0, "event"], "train.step"],
      ["an event not of its schema", ["events", 0, "seq"], "one"],
      ["an event of no run of the state", ["events", 0, "run_id"], "elsewhere"],
    ];
    assert.ok(checkOpening(openingAt(middle)) !== undefined);
    for (const [what, where, value] of breakages)
      assert.equal(checkOpening(changed(openingAt(middle), where, value)), undefined, what);
    for (const answer of [null, [], "opening", 1, {}]) assert.equal(checkOpening(answer), undefined);
  });

  it("is fetched with the token, and the stream read on from its offset with a Range request", async () => {
    const stream = resource({ body: STREAM });
    const files = {
      "/opening": { type: "application/json", body: JSON.stringify(openingAt(middle)) },
      "/garbled": { type: "application/json", body: "{not json" },
    };
    await withRangeServer(
      stream,
      async (origin) => {
        const headers = { "X-Trainwire-Token": "t" };
        assert.equal(await fetchOpening(`${origin}/missing`, headers), undefined);
        assert.equal(await fetchOpening(`${origin}/garbled`, headers), undefined);
        const opening = await fetchOpening(`${origin}/opening`, headers);
        assert.ok(opening !== undefined);
        const reader = readerFrom(opening);
        assert.ok(reader !== undefined);
        for await (const chunk of fromFetch(`${origin}/progress.jsonl`, {
          offset: reader.consumedBytes,
          untilEnd: true,
        }))
          reader.feed(chunk);
        // the byte before the offset is asked for too: it tells a grown stream from a replaced one
        assert.equal(stream.seen[0], `bytes=${middle - 1}-`);
        assert.equal(stream.sent[0], STREAM.length - middle + 1);
        assert.equal(canonicalStringify(reader.series?.toJSON()), canonicalStringify(whole().reader.series?.toJSON()));
      },
      files,
    );
  });
});
