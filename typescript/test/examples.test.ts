// docs/typescript.md quotes the examples verbatim, and the Node example works on a real run.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { chartLoss } from "../examples/loss-chart.js";
import { stopWhenGoodEnough } from "../examples/node-watch-and-stop.js";
import { known, line, ndjson, REPO_ROOT, tempDir, utf8 } from "./helpers.js";
import { resource, withRangeServer } from "./range-server.js";

/** A fake trainer: a step every 20 ms with a falling loss; it honours the control file like the Python one. */
const TRAINER = `
const fs = require("node:fs");
const path = require("node:path");
const dir = process.argv[1];
const out = path.join(dir, "progress.jsonl");
const stop = path.join(dir, ".trainwire-stop");
let seq = 0;
const write = (event, fields) => fs.appendFileSync(out, JSON.stringify({
  schema_version: 1, seq: ++seq, ts: new Date().toISOString().replace("Z", "000Z"), run_id: "fake", event, ...fields,
}) + "\\n");
write("run.started", { producer: { name: "fake", version: "0" }, total_steps: 500 });
let step = 0;
const timer = setInterval(() => {
  step += 1;
  if (fs.existsSync(stop)) {
    const body = JSON.parse(fs.readFileSync(stop, "utf8"));
    fs.unlinkSync(stop);
    clearInterval(timer);
    write("stop.requested", { source: "control_file", signal: null, reason: body.reason ?? null, requested_by: body.requested_by ?? null });
    write("checkpoint.saved", { step, path: "checkpoint-" + step, reason: "stop" });
    write("run.finished", { status: "interrupted", exit_code: 2, error: null, reason: "control_file", step,
      checkpoint: "checkpoint-" + step, duration_s: 1, metrics: {}, artifacts: {} });
    return;
  }
  if (step > 500) { clearInterval(timer); return; }
  write("train.step", { step, total_steps: 500, epoch: null, loss: 3 / step, learning_rate: 0.001,
    elapsed_s: step / 50, eta_s: null, progress: step / 500 });
}, 20);
`;

describe("the examples of docs/typescript.md", () => {
  it("are quoted verbatim by the page", async () => {
    const page = await readFile(path.join(REPO_ROOT, "docs/typescript.md"), "utf8");
    const quoted = [...page.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)];
    assert.deepEqual(
      quoted.map(([, file]) => file),
      [
        "typescript/examples/loss-chart.ts",
        "typescript/examples/browser-progress.ts",
        "typescript/examples/node-watch-and-stop.ts",
      ],
    );
    for (const [, file, code] of quoted) {
      assert.equal(
        code,
        await readFile(path.join(REPO_ROOT, file ?? ""), "utf8"),
        `docs/typescript.md is out of date with ${file}`,
      );
    }
  });

  it("stops a run once its loss is good enough (Node: followFile + requestStop)", async () => {
    const { dir, remove } = await tempDir();
    const trainer = spawn(process.execPath, ["-e", TRAINER, dir], { stdio: ["ignore", "inherit", "inherit"] });
    const exited = new Promise((resolve) => trainer.once("exit", resolve));
    const logged: string[] = [];
    try {
      const status = await stopWhenGoodEnough(dir, 0.1, (message) => logged.push(message));
      assert.equal(status, "interrupted");
      assert.ok(
        logged.some((message) => message.startsWith("step ")),
        logged.join("\n"),
      );
      const lines = (await readFile(path.join(dir, "progress.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((text) => JSON.parse(text) as Record<string, unknown>);
      const stop = lines.find((item) => item["event"] === "stop.requested");
      assert.deepEqual([stop?.["reason"], stop?.["requested_by"]], ["loss below 0.1", "stop-when-good-enough"]);
      const lastStep = lines.filter((item) => item["event"] === "train.step").at(-1);
      assert.ok((lastStep?.["step"] as number) < 500, "the run stopped early");
    } finally {
      trainer.kill();
      await exited;
      await remove();
    }
  });

  it("draws the loss of a run with a restart as uPlot data, then returns how it ended (watchRun + series)", async () => {
    const stream = resource();
    await withRangeServer(stream, async (origin) => {
      const draws: [string, unknown][] = [];
      const warnings: string[] = [];
      const ended = chartLoss(
        `${origin}/progress.jsonl`,
        (data, title) => draws.push([title, data]),
        undefined,
        (message) => warnings.push(message),
      );
      await new Promise<void>((resolve) => {
        const check = (): unknown => (warnings.length > 0 ? resolve() : setTimeout(check, 5)); // a 404 first: reported, not fatal
        check();
      });
      stream.body = utf8(
        ndjson(
          known("run.started", 1),
          ...[1, 2, 3].map((step) => known("train.step", step + 1, { step, loss: 4 - step })),
          line("train.restarted", 5, { reason: "oom", attempt: 2, previous_step: 3, step: 2 }),
          known("train.step", 6, { step: 3, loss: 0.5 }),
          known("run.finished", 7, { step: 3 }),
        ),
      );
      assert.equal(await ended, "succeeded");
      assert.deepEqual(draws.at(-1), [
        "r1, attempt 2",
        [
          [1, 2, 3],
          [3, null, 0.5],
        ],
      ]);
      assert.match(warnings[0] ?? "", /^http_status: .*HTTP 404/);
    });
  });
});
