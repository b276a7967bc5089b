// The page survives any value: the runs list's rows are checked field by field, objects keyed by
// user data (config keys, series names, labels) are looked up by own property only, and a CSV
// cell never starts a formula.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SeriesStore, type SeriesStoreSnapshot, StreamReader } from "trainwire";
import { textCell } from "../dashboard/csv.js";
import { checkedNames, checkedRows } from "../dashboard/run-rows.js";
import { markerColour } from "../src/charts.js";

const STARTED =
  '{"schema_version":1,"seq":1,"ts":"2026-12-04T10:00:00.000000Z","run_id":"r","event":"run.started","producer":{"name":"trainwire","version":"0.1.0"},"total_steps":1}';

const GOOD = {
  key: "good",
  run_id: "r-good",
  status: "succeeded",
  step: 5,
  total_steps: 5,
  duration_s: 1.5,
  last_loss: 0.2,
  best_loss: 0.1,
  git_sha: "0123456789abcdef",
  started_at: "2026-12-04T10:00:00Z",
  config: { lr: 0.1 },
  notes: "fine",
};

describe("the runs list's rows", () => {
  it("keep a row whose git_sha and status are numbers, those fields blanked, beside the good rows", () => {
    const rows = checkedRows([GOOD, { ...GOOD, key: "bad", git_sha: 12345, status: 123 }, { ...GOOD, key: "other" }]);
    assert.deepEqual(
      rows?.map((row) => [row.key, row.status, row.git_sha]),
      [
        ["good", "succeeded", "0123456789abcdef"],
        ["bad", null, null],
        ["other", "succeeded", "0123456789abcdef"],
      ],
    );
  });

  it("blank every field of the wrong type and drop a row without a key, or a run seen before", () => {
    const hostile = {
      key: "hostile",
      run_id: ["r"],
      status: { running: true },
      step: "5",
      total_steps: null,
      duration_s: true,
      last_loss: "0.2",
      best_loss: {},
      started_at: "not a date",
      config: ["lr"],
      notes: 7,
      name: 12,
      tags: ["fp16", 3, null],
    };
    const again = { ...GOOD, key: "hostile", run_id: "" }; // the same key and run id as the hostile row
    const rows = checkedRows([null, 3, "row", [], { key: 5 }, { key: "" }, hostile, again]);
    assert.deepEqual(rows, [
      {
        key: "hostile",
        run_id: "",
        name: null,
        tags: ["fp16"],
        status: null,
        verdict: null,
        step: null,
        total_steps: null,
        duration_s: null,
        last_loss: null,
        best_loss: null,
        git_sha: null,
        started_at: null,
        config: new Map(),
        notes: null,
      },
    ]);
    assert.equal(checkedRows({ rows: [GOOD] }), undefined);
    assert.equal(checkedRows(null), undefined);
    // an earlier run of the same directory is a row of its own
    assert.deepEqual(
      checkedRows([GOOD, { ...GOOD, run_id: "earlier" }])?.map((row) => row.run_id),
      [GOOD.run_id, "earlier"],
    );
  });

  it("hold config keys named like Object's own properties as data only", () => {
    const config = JSON.parse('{"constructor": 1, "toString": "x", "hasOwnProperty": null, "__proto__": {"a": 1}}');
    const [row] = checkedRows([{ ...GOOD, config }]) ?? [];
    assert.deepEqual([...(row?.config.keys() ?? [])].sort(), [
      "__proto__",
      "constructor",
      "hasOwnProperty",
      "toString",
    ]);
    assert.equal(row?.config.get("toString"), "x");
    const [plain] = checkedRows([GOOD]) ?? [];
    assert.equal(plain?.config.get("constructor"), undefined, "a run without the key has no value for it");
  });

  it("take the saved column names only when they are a list of names", () => {
    assert.deepEqual(checkedNames('["constructor", 5, "lr"]'), ["constructor", "lr"]);
    for (const saved of ['{"length": 2}', "not json", "null", '"lr"']) assert.deepEqual(checkedNames(saved), [], saved);
  });
});

describe("lookups by user data", () => {
  it("colour an end marker labelled like an Object property with the marker's own colour", () => {
    for (const label of ["constructor", "toString", "hasOwnProperty", "__proto__"])
      assert.equal(markerColour("finished", label), "#667085", label);
    assert.equal(markerColour("finished", "failed"), "#d92d20");
  });

  it("keep a run.finished field named __proto__ in the run state, as Python does", () => {
    const reader = new StreamReader();
    reader.feed(
      [
        STARTED,
        '{"schema_version":1,"seq":2,"ts":"2026-12-04T10:00:01.000000Z","run_id":"r","event":"run.finished","status":"succeeded","exit_code":0,"error":null,"reason":null,"step":null,"checkpoint":null,"duration_s":1.0,"metrics":{},"artifacts":{},"__proto__":{"x":1}}',
        "",
      ].join("\n"),
    );
    const finished = reader.run("r")?.finished as Record<string, unknown> | null | undefined;
    assert.ok(finished !== null && finished !== undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(finished, "__proto__")?.value, { x: 1 });
  });

  it("order restored series whose first segment is an Object property by name, as Python does", () => {
    const reader = new StreamReader({ series: true });
    reader.feed(
      [
        STARTED,
        '{"schema_version":1,"seq":2,"ts":"2026-12-04T10:00:01.000000Z","run_id":"r","event":"train.step","step":1,"total_steps":1,"epoch":null,"loss":1.0,"learning_rate":0.1,"elapsed_s":0.0,"eta_s":null,"progress":1.0,"metrics":{"a":1,"z":2}}',
        "",
      ].join("\n"),
    );
    const saved = JSON.parse(JSON.stringify(reader.series?.toJSON()).replace('"metrics/z"', '"constructor/z"'));
    const names = SeriesStore.fromJSON(saved as SeriesStoreSnapshot)
      .run("r")
      ?.names();
    assert.deepEqual(names, ["loss", "learning_rate", "constructor/z", "metrics/a"]);
  });
});

describe("a CSV text cell", () => {
  it("never starts a formula, and is quoted so no separator starts a new cell inside it", () => {
    assert.equal(textCell("=cmd|' /C calc'!A0"), `"'=cmd|' /C calc'!A0"`);
    assert.equal(textCell(";=cmd|' /C calc'!A0"), `";=cmd|' /C calc'!A0"`);
    for (const start of ["+", "-", "@", "\t", "\r", "\n", "\0"]) assert.equal(textCell(`${start}1`), `"'${start}1"`);
    assert.equal(textCell('say "hi", then\nbye'), '"say ""hi"", then\nbye"');
    assert.equal(textCell("loss"), '"loss"');
  });
});
