// RFC 8785 canonical JSON (docs/reader-rules.md section 5).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canonicalStringify } from "trainwire";

describe("canonicalStringify", () => {
  it("sorts keys by UTF-16 code units, at every depth, with no whitespace", () => {
    // U+1F600 (surrogates D83D DE00) sorts before U+E000 in UTF-16, unlike by code point.
    const value = { b: [3, { z: 1, a: 2 }], a: null, "\u{1F600}": 1, "\uE000": 2, A: true, "": "e" };
    assert.equal(
      canonicalStringify(value),
      '{"":"e","A":true,"a":null,"b":[3,{"a":2,"z":1}],"\u{1F600}":1,"\uE000":2}',
    );
  });

  it("writes numbers as ECMAScript does", () => {
    const numbers = [5.0, -0, 1e-7, 1e21, 1e20, 0.1 + 0.2, 123456789012345680000, -1.5e-10, 9007199254740991];
    assert.equal(
      canonicalStringify(numbers),
      "[5,0,1e-7,1e+21,100000000000000000000,0.30000000000000004,123456789012345680000,-1.5e-10,9007199254740991]",
    );
    assert.equal(canonicalStringify([Number.NaN, Infinity]), "[null,null]");
  });

  it("escapes strings as JSON.stringify does, non-ASCII kept literal", () => {
    assert.equal(
      canonicalStringify('é\u0000\u001f\b\t\n\f\r"\\/\u2028🚀'),
      '"é\\u0000\\u001f\\b\\t\\n\\f\\r\\"\\\\/\u2028🚀"',
    );
  });

  it("leaves out undefined members, and refuses what is not JSON", () => {
    assert.equal(canonicalStringify({ a: undefined, b: [undefined] }), '{"b":[null]}');
    assert.throws(() => canonicalStringify(() => 1), TypeError);
    assert.throws(() => canonicalStringify(1n), TypeError);
  });
});
