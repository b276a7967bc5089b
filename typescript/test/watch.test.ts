// watchRun over files, fetch bodies and readable streams; DecoderStream; runs() reuse; resuming from a saved state.
import assert from "node:assert/strict";
import { appendFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { type DecodedLine, DecoderStream, type RunUpdate, StreamReader, watchRun } from "trainwire";
import { fromFetch } from "trainwire/browser";
import { followFile } from "trainwire/node";
import { known, line, ndjson, tempDir, utf8 } from "./helpers.js";
import { resource, withRangeServer } from "./range-server.js";

const TWO_RUNS = ndjson(
  known("run.started", 1, {}, "old"),
  known("train.step", 2, { step: 1 }, "old"),
  known("run.started", 1, {}, "new"),
  known("train.step", 3, { step: 2 }, "old"),
  known("train.step", 2, { step: 7, loss: 0.5 }, "new"),
);

describe("watchRun", () => {
  it("follows the latest run of a file by default, or the one asked for, and resets with the file", async () => {
    const { dir, remove } = await tempDir();
    try {
      const file = path.join(dir, "progress.jsonl");
      await writeFile(file, TWO_RUNS);
      const abort = new AbortController();
      const updates: RunUpdate[] = [];
      const watching = (async () => {
        for await (const update of watchRun((hooks) => followFile(file, { ...hooks, pollIntervalMs: 5 }), {
          signal: abort.signal,
          series: true,
        })) {
          updates.push(update);
          if (update.state?.finished !== null && update.state?.finished !== undefined) {
            // replaced by a fresh file with another run: the watch starts afresh
            await writeFile(`${file}.next`, ndjson(known("run.started", 1, {}, "third")));
            await rename(`${file}.next`, file);
          }
          if (update.state?.run_id === "third") abort.abort();
        }
      })();
      const first = await waitFor(updates, (all) => all.length >= 1);
      assert.equal(first[0]?.state?.run_id, "new");
      assert.equal(first[0]?.state?.step, 7);
      assert.deepEqual(
        first[0]?.events.map((item) => eventOf(item)),
        ["run.started", "train.step"],
      );
      assert.deepEqual(first[0]?.series?.uplot("loss"), [[7], [0.5]]);
      await appendFile(file, ndjson("not json", known("run.finished", 3, {}, "new")));
      await watching; // ends quietly on abort
      const last = updates.at(-1);
      assert.equal(last?.state?.run_id, "third");
      assert.equal(last?.reset, true);
      assert.ok(
        updates.some((update) => update.events.some((item) => item.kind === "diagnostic")),
        "diagnostics are passed on",
      );
    } finally {
      await remove();
    }
  });

  it("follows a given run id over a fetch source and over a response body", async () => {
    const stream = resource({ body: utf8(TWO_RUNS) });
    await withRangeServer(stream, async (origin) => {
      const url = `${origin}/progress.jsonl`;
      const fromSource: RunUpdate[] = [];
      for await (const update of watchRun((hooks) => fromFetch(url, { ...hooks, untilEnd: true }), { runId: "old" }))
        fromSource.push(update);
      assert.equal(fromSource.at(-1)?.state?.step, 2);
      assert.ok(
        fromSource.every((update) =>
          update.events.every((item) => item.kind === "diagnostic" || item.event.run_id === "old"),
        ),
      );
      const response = await fetch(url);
      assert.ok(response.body !== null);
      const fromBody: RunUpdate[] = [];
      for await (const update of watchRun(response.body)) fromBody.push(update);
      assert.equal(fromBody.at(-1)?.state?.run_id, "new");
    });
  });

  it("ends quietly when aborted in the middle of a fetch body", async () => {
    const stream = resource({ body: utf8(TWO_RUNS), stallAfter: 40 });
    await withRangeServer(stream, async (origin) => {
      const abort = new AbortController();
      const response = await fetch(`${origin}/progress.jsonl`, { signal: abort.signal });
      assert.ok(response.body !== null);
      setTimeout(() => abort.abort(), 20);
      const updates: RunUpdate[] = [];
      for await (const update of watchRun(response.body, { signal: abort.signal })) updates.push(update);
      assert.equal(updates.length, 0); // the first line is longer than what arrived
    });
  });
});

describe("DecoderStream", () => {
  it("turns a byte stream into decoded lines", async () => {
    const bytes = new Blob([ndjson(known("run.started", 1), "{bad")]).stream();
    const items: DecodedLine[] = [];
    const reader = bytes.pipeThrough(new DecoderStream()).getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) items.push(next.value);
    assert.deepEqual(
      items.map((item) => item.kind),
      ["event", "diagnostic"],
    );
  });
});

describe("StreamReader runs", () => {
  it("hands out the same frozen copy while a run does not change", () => {
    const reader = new StreamReader();
    reader.feed(TWO_RUNS);
    const [oldBefore, newBefore] = reader.runs();
    reader.feed(ndjson(known("train.step", 3, { step: 8 }, "new")));
    const [oldAfter, newAfter] = reader.runs();
    assert.equal(oldAfter, oldBefore);
    assert.notEqual(newAfter, newBefore);
    assert.equal(newAfter?.step, 8);
    assert.ok(Object.isFrozen(newAfter) && Object.isFrozen(newAfter?.seq_gaps));
    assert.equal(reader.latestRun(), newAfter);
    assert.equal(reader.run("old"), oldAfter);
    assert.equal(reader.run("missing"), undefined);
  });

  it("resumed from a saved state, still detects sequence gaps and staleness", () => {
    const first = new StreamReader();
    first.feed(ndjson(known("run.started", 1, { heartbeat_interval_s: 5 }), known("train.step", 2)));
    const saved = JSON.parse(JSON.stringify(first.toState({ now: "2030-01-01T00:00:00Z" }))) as ReturnType<
      StreamReader["toState"]
    >;
    assert.equal(saved.runs[0]?.status, "stale");
    const resumed = new StreamReader({ resume: saved });
    assert.equal(resumed.consumedBytes, first.consumedBytes);
    const next = line("train.step", 5, {
      step: 6,
      total_steps: 10,
      epoch: null,
      loss: 1,
      learning_rate: null,
      elapsed_s: 1,
      eta_s: null,
      progress: null,
    });
    resumed.feed(ndjson(next));
    const run = resumed.latestRun();
    assert.deepEqual(run?.seq_gaps, [[3, 5]]);
    assert.equal(run?.status, "running");
    assert.equal(resumed.latestRun({ now: "2030-01-01T00:00:00Z" })?.status, "stale");
    const state = resumed.toState();
    assert.deepEqual(
      state.diagnostics.map((diagnostic) => diagnostic.code),
      ["seq_gap"],
    );
    assert.equal(state.lines, 3);
  });
});

function eventOf(item: DecodedLine): string {
  return item.kind === "diagnostic" ? item.diagnostic.code : item.event.event;
}

/** Resolves with `items` once `ready` holds, checking at each turn of the event loop. */
async function waitFor<T>(items: T[], ready: (items: T[]) => boolean): Promise<T[]> {
  while (!ready(items)) await new Promise((resolve) => setTimeout(resolve, 1));
  return items;
}
