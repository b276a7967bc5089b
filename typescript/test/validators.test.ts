// The generated line validators against ajv compiling the bundled schema at run time: the
// same verdict and the same first error (the reader's diagnostics come from it) on every line
// of the conformance suite and on many mutations of each.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, it } from "node:test";
import { EVENT_NAMES, type Validator, validateEnvelope, validateEvent, validateLine } from "trainwire";
import { known, PACKAGE_DIR, REPO_ROOT, SUITE_DIR } from "./helpers.js";

type Check = (data: unknown) => { valid: boolean; error: unknown };

interface AjvValidator {
  (data: unknown): boolean;
  errors?: unknown[] | null;
}

/**
 * ajv with the options the generated validators follow, and ajv-formats' full date-time.
 * `inlineRefs: false`: an error's schemaPath is relative to the definition holding the
 * failing keyword, wherever ajv would have inlined it.
 */
function referenceValidators(): { line: Check; envelope: Check; events: Map<string, Check> } {
  const require = createRequire(path.join(PACKAGE_DIR, "package.json"));
  const Ajv2020 = (
    require("ajv/dist/2020") as {
      default: new (
        options: object,
      ) => { addSchema(schema: object): void; getSchema(ref: string): AjvValidator | undefined };
    }
  ).default;
  const addFormats = (require("ajv-formats") as { default: (ajv: object, options: object) => void }).default;
  const bundle = JSON.parse(readFileSync(path.join(REPO_ROOT, "schemas/bundled/trainwire-v1.schema.json"), "utf8")) as {
    $id: string;
    $defs: Record<string, { properties?: { event?: { const?: string } } }>;
  };
  const ajv = new Ajv2020({
    inlineRefs: false,
    discriminator: true,
    allErrors: false,
    strict: true,
    strictRequired: false,
    strictTypes: false,
    allowUnionTypes: true,
  });
  addFormats(ajv, { mode: "full", keywords: false, formats: ["date-time"] });
  ajv.addSchema(bundle);
  const compiled = (ref: string): Check => {
    const validate = ajv.getSchema(ref);
    assert.ok(validate !== undefined, ref);
    return (data) => ({ valid: validate(data), error: validate.errors?.[0] });
  };
  const events = new Map<string, Check>();
  for (const [name, schema] of Object.entries(bundle.$defs)) {
    const event = schema.properties?.event?.const;
    if (event !== undefined) events.set(event, compiled(`${bundle.$id}#/$defs/${name}`));
  }
  return { line: compiled(bundle.$id), envelope: compiled(`${bundle.$id}#/$defs/Envelope`), events };
}

function generated(validate: Validator<unknown>): Check {
  return (data) => ({ valid: validate(data), error: validate.errors?.[0] });
}

/** Every line of the suite that parses to an object: golden cases and single-line verdicts. */
function suiteLines(): Record<string, unknown>[] {
  const texts = new Set<string>();
  const cases = path.join(SUITE_DIR, "cases");
  for (const id of readdirSync(cases)) {
    for (const text of readFileSync(path.join(cases, id, "stream.ndjson"), "utf8").split(/\r?\n/))
      texts.add(text.replace(/^\uFEFF/, ""));
  }
  const verdicts = JSON.parse(readFileSync(path.join(SUITE_DIR, "validation-cases.json"), "utf8")) as {
    cases: { line: string }[];
  };
  for (const { line } of verdicts.cases) texts.add(line);
  const lines: Record<string, unknown>[] = EVENT_NAMES.map((event) => known(event, 1));
  for (const text of texts) {
    try {
      const value: unknown = JSON.parse(text);
      if (value !== null && typeof value === "object" && !Array.isArray(value))
        lines.push(value as Record<string, unknown>);
    } catch {
      // not JSON: no validator sees it
    }
  }
  return lines;
}

const REPLACEMENTS: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  -(2 ** 53),
  "",
  "x",
  "a".repeat(300),
  "a/b",
  "../up",
  "2026-13-01T00:00:00Z",
  "2026-12-31T23:59:60Z",
  {},
  [],
  { "": 1 },
  { "a/b~c": "x" },
  { k: {} },
  { name: "n", version: "1" },
];

/** The line, and copies with one field (at any depth) removed or replaced, or its event renamed. */
function* mutations(line: Record<string, unknown>): Generator<unknown> {
  yield line;
  const clone = (): Record<string, unknown> => JSON.parse(JSON.stringify(line)) as Record<string, unknown>;
  const paths: string[][] = [];
  const walk = (node: unknown, at: string[]): void => {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node)) {
      paths.push([...at, key]);
      walk(value, [...at, key]);
    }
  };
  walk(line, []);
  for (const at of paths) {
    const parentOf = (copy: Record<string, unknown>): Record<string, unknown> =>
      at.slice(0, -1).reduce((node, key) => node[key] as Record<string, unknown>, copy);
    const key = at[at.length - 1] as string;
    const removed = clone();
    delete parentOf(removed)[key];
    yield removed;
    for (const value of REPLACEMENTS) {
      const copy = clone();
      parentOf(copy)[key] = value;
      yield copy;
    }
  }
  for (const event of [...EVENT_NAMES, "custom.thing", "Bad"]) yield { ...line, event };
  yield { ...line, metrics: { "": 1 } };
  yield { ...line, artifacts: { "a/b~c": "../x" } };
}

describe("generated line validators", () => {
  it("agree with ajv on every suite line and its mutations: verdict and first error", () => {
    const reference = referenceValidators();
    assert.deepEqual([...reference.events.keys()].sort(), [...EVENT_NAMES].sort());
    const pairs: [string, Check, Check][] = [
      ["validateLine", generated(validateLine), reference.line],
      ["validateEnvelope", generated(validateEnvelope), reference.envelope],
      ...EVENT_NAMES.map((event): [string, Check, Check] => [
        event,
        generated(validateEvent[event]),
        reference.events.get(event) as Check,
      ]),
    ];
    let compared = 0;
    let invalid = 0;
    for (const line of suiteLines()) {
      for (const data of mutations(line)) {
        for (const [name, ours, theirs] of pairs) {
          const expected = theirs(data);
          assert.deepEqual(ours(data), expected, `${name}: ${JSON.stringify(data)}`);
          compared += 1;
          if (!expected.valid) invalid += 1;
        }
      }
    }
    for (const data of [null, 1, "x", [], true]) {
      for (const [name, ours, theirs] of pairs)
        assert.deepEqual(ours(data), theirs(data), `${name}: ${JSON.stringify(data)}`);
    }
    // Both verdicts are well represented.
    assert.ok(compared > 100_000 && invalid > compared / 2 && invalid < compared, `${invalid} of ${compared} invalid`);
  });
});
