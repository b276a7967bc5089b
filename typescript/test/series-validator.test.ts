// The generated series validator (the page's check of an opening's `series`) against ajv
// compiling the bundled series schema at run time: the same verdict and the same first error,
// on a store as the package writes it and on mutations of each of its values.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, it } from "node:test";
import { SeriesStore, StreamReader } from "trainwire";
import { validateSeriesStoreSnapshot } from "../src/generated/validate-series.js";
import { known, PACKAGE_DIR, REPO_ROOT } from "./helpers.js";

interface AjvValidator {
  (data: unknown): boolean;
  errors?: unknown[] | null;
}

function referenceValidator(): AjvValidator {
  const require = createRequire(path.join(PACKAGE_DIR, "package.json"));
  const Ajv2020 = (
    require("ajv/dist/2020") as {
      default: new (
        options: object,
      ) => { addSchema(schema: object): void; getSchema(ref: string): AjvValidator | undefined };
    }
  ).default;
  const bundle = JSON.parse(readFileSync(path.join(REPO_ROOT, "schemas/bundled/series-v1.schema.json"), "utf8")) as {
    $id: string;
  };
  const ajv = new Ajv2020({ inlineRefs: false, allErrors: false, strict: false });
  ajv.addSchema(bundle);
  const validate = ajv.getSchema(`${bundle.$id}#/$defs/SeriesStoreSnapshot`);
  assert.ok(validate !== undefined);
  return validate;
}

/** A store with series and a marker as `toJSON()` gives it, and a restart. */
function writtenStore(): unknown {
  const series = new SeriesStore();
  const reader = new StreamReader({ series });
  const lines = [
    known("run.started", 1),
    known("train.step", 2, { step: 1, loss: 0.5 }),
    known("train.step", 3, { step: 2, loss: 0.3 }),
    known("run.finished", 4),
  ];
  reader.feed(`${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
  const store = JSON.parse(JSON.stringify(series.toJSON())) as { runs: { restarts: number[][] }[] };
  (store.runs[0] as { restarts: number[][] }).restarts = [[2, 1]]; // a restart's [attempt, step] too
  return store;
}

/** Each value of `value` replaced in turn by each of `replacements`, and each array shortened and lengthened. */
function* mutations(value: unknown, replace: (next: unknown) => unknown = (next) => next): Generator<unknown> {
  const replacements = [null, true, "1", 1.5, -1, 2 ** 53, {}, [], [1, 2, 3, 4]];
  for (const next of replacements) yield replace(next);
  if (Array.isArray(value)) {
    yield replace([...value, 0]);
    yield replace(value.slice(0, -1));
    for (const [index, item] of value.entries())
      yield* mutations(item, (next) => replace(value.map((old, at) => (at === index ? next : old))));
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const { [key]: _dropped, ...rest } = value as Record<string, unknown>;
      yield replace(rest);
      yield* mutations(item, (next) => replace({ ...value, [key]: next }));
    }
  }
}

describe("the generated series validator", () => {
  it("gives ajv's verdict and first error on a written store and its mutations", () => {
    const ajv = referenceValidator();
    const store = writtenStore();
    assert.equal(validateSeriesStoreSnapshot(store), true);
    let compared = 0;
    for (const mutated of mutations(store)) {
      const valid = ajv(mutated);
      assert.equal(validateSeriesStoreSnapshot(mutated), valid, JSON.stringify(mutated));
      assert.deepEqual(validateSeriesStoreSnapshot.errors?.[0], ajv.errors?.[0], JSON.stringify(mutated));
      compared++;
    }
    assert.ok(compared > 500, `${compared} mutations`);
  });
});
