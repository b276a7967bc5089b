// Every golden case of the conformance suite: the TypeScript reader reconstructs the expected state,
// whole and split into random chunks (diagnostic messages may differ between readers).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { canonicalStringify, type ReaderState, StreamReader } from "trainwire";
import { SUITE_DIR } from "./helpers.js";

const CASES = path.join(SUITE_DIR, "cases");

interface CaseFile {
  id: string;
  now?: string;
  stale_after_s?: number;
  max_line_bytes?: number;
}

function comparable(state: ReaderState): string {
  return canonicalStringify({ ...state, diagnostics: state.diagnostics.map(({ line, code }) => ({ line, code })) });
}

/** A small deterministic generator, so that a failing split can be reproduced. */
function splitter(seed: number): (limit: number) => number {
  let value = seed;
  return (limit) => {
    value = (value * 1103515245 + 12345) % 2 ** 31;
    return 1 + (value % limit);
  };
}

const ids = readdirSync(CASES)
  .filter((id) => existsSync(path.join(CASES, id, "expected-state.json")))
  .sort();

describe("conformance cases", () => {
  it("are there to check", () => assert.ok(ids.length >= 20, `only ${ids.length} cases with an expected state`));

  for (const id of ids) {
    it(id, () => {
      const testCase = JSON.parse(readFileSync(path.join(CASES, id, "case.json"), "utf8")) as CaseFile;
      const stream = readFileSync(path.join(CASES, id, "stream.ndjson"));
      const expected = JSON.parse(readFileSync(path.join(CASES, id, "expected-state.json"), "utf8")) as ReaderState;
      const options = { maxLineBytes: testCase.max_line_bytes };
      const liveness = { now: testCase.now, staleAfterS: testCase.stale_after_s };
      const whole = new StreamReader(options);
      whole.feed(stream);
      assert.equal(comparable(whole.toState(liveness)), comparable(expected));
      const next = splitter(id.length);
      const split = new StreamReader(options);
      for (let start = 0; start < stream.length; ) {
        const end = Math.min(stream.length, start + next(stream.length > 4096 ? 65536 : 64));
        split.feed(stream.subarray(start, end));
        start = end;
      }
      assert.equal(comparable(split.toState(liveness)), comparable(expected), "split into random chunks");
    });
  }
});
