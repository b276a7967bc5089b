// What the cross-language scripts share: the Python tests (python/tests/support/typescript_side.py)
// write a JSON list of requests on stdin and read one line of answer per request.
import { readFileSync } from "node:fs";
import { canonicalStringify } from "../../src/canonical.js";

/** The requests given on stdin: a JSON list (its items as the calling test wrote them). */
export function requests<Request>(): Request[] {
  const given: unknown = JSON.parse(readFileSync(0, "utf8"));
  if (!Array.isArray(given)) throw new TypeError("stdin must hold a JSON list of requests");
  return given as Request[];
}

/** One line of answer: `value` as JSON. */
export function answer(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** One line of answer: `value` as canonical JSON (sorted keys), to compare with Python's. */
export function canonicalAnswer(value: unknown): void {
  process.stdout.write(`${canonicalStringify(value)}\n`);
}

/** The bytes of the file at `path`. */
export function bytesOf(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}
