// requestStopAndWait: the control file, then the run's acknowledgement (`stop.requested`) or
// why there is none, as `trainwire stop` reports it.
import assert from "node:assert/strict";
import { appendFile, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { requestStopAndWait, STOP_FILE } from "trainwire/node";
import { known, line, ndjson } from "./helpers.js";

async function directory(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), "trainwire-stop-"));
}

describe("requestStopAndWait", () => {
  it("reports the run that acknowledged the request, with its last step", async () => {
    const dir = await directory();
    const stream = path.join(dir, "progress.jsonl");
    await writeFile(
      stream,
      ndjson(known("run.started", 1, { stop_channels: ["control_file", "api"] }), known("train.step", 2)),
    );
    const waiting = requestStopAndWait(dir, { timeoutMs: 10_000 });
    // the run: it sees the control file, takes it, and acknowledges
    for (;;) {
      const body = await readFile(path.join(dir, STOP_FILE), "utf8").catch(() => null);
      if (body !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await appendFile(
      stream,
      ndjson(line("stop.requested", 3, { source: "control_file", signal: null, reason: null, requested_by: null })),
    );
    const outcome = await waiting;
    assert.deepEqual(
      { acknowledged: outcome.acknowledged, runId: outcome.runId, step: outcome.step, why: outcome.why },
      { acknowledged: true, runId: "r1", step: 5, why: null },
    );
  });

  it("says the request stays pending, and why, when nothing acknowledges it", async () => {
    const empty = await directory();
    const none = await requestStopAndWait(empty, { timeoutMs: 100 });
    assert.equal(none.acknowledged, false);
    assert.match(none.why ?? "", /^no run has started there yet/);
    assert.equal(await readFile(path.join(empty, STOP_FILE), "utf8"), "{}"); // pending: still there

    const deaf = await directory();
    await writeFile(path.join(deaf, "progress.jsonl"), ndjson(known("run.started", 1, { stop_channels: ["sigterm"] })));
    assert.match(
      (await requestStopAndWait(deaf, { timeoutMs: 100 })).why ?? "",
      /does not listen to the control file \(stop_channels: sigterm\)/,
    );

    const ended = await directory();
    await writeFile(path.join(ended, "progress.jsonl"), ndjson(known("run.started", 1), known("run.finished", 2)));
    assert.match(
      (await requestStopAndWait(ended, { timeoutMs: 100 })).why ?? "",
      /already finished \(succeeded\): no live run/,
    );

    const earlier = await directory(); // a stop.requested from before the request is not an acknowledgement
    await writeFile(
      path.join(earlier, "progress.jsonl"),
      ndjson(
        known("run.started", 1),
        line("stop.requested", 2, { source: "api", signal: null, reason: null, requested_by: null }),
      ),
    );
    const outcome = await requestStopAndWait(earlier, { timeoutMs: 100 });
    assert.equal(outcome.acknowledged, false);
    assert.match(outcome.why ?? "", /did not declare what it listens to/);
  });
});
