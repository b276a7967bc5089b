// docs/reader-rules.md sections 1 and 2: framing, the order of the checks, diagnostics.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  canonicalStringify,
  type DecodedLine,
  Decoder,
  type Line,
  StreamError,
  StreamReader,
  type WithExtensions,
} from "trainwire";
import { known, line, ndjson, SUITE_DIR, utf8 } from "./helpers.js";

const codes = (items: DecodedLine[]): [number, string][] =>
  items.flatMap((item) => (item.kind === "diagnostic" ? [[item.line, item.diagnostic.code] as [number, string]] : []));
const kinds = (items: DecodedLine[]): string[] => items.map((item) => item.kind);

function decodeAll(input: string | Uint8Array, options = {}): { decoder: Decoder; items: DecodedLine[] } {
  const decoder = new Decoder(options);
  return { decoder, items: decoder.feed(input) };
}

describe("Decoder: the checks, in order", () => {
  it("gives each code its line number, and reads the valid lines around the bad ones", () => {
    const text = ndjson(
      known("run.started", 1),
      "not json",
      "[1, 2]",
      '{"schema_version": 2, "seq": "whatever"}',
      known("phase.started", 2, { phase: 7 }),
      '{"schema_version":1,"seq":-1,"ts":"2026-11-29T10:00:00Z","run_id":"r1","event":"model.exported"}',
      known("phase.started", 2),
    );
    const { items } = decodeAll(text);
    assert.deepEqual(codes(items), [
      [2, "invalid_json"],
      [3, "schema_violation"],
      [4, "unsupported_version"],
      [5, "schema_violation"],
      [6, "schema_violation"],
    ]);
    assert.deepEqual(kinds(items.filter((item) => item.kind !== "diagnostic")), ["event", "event"]);
  });

  it("checks the limit before UTF-8, UTF-8 before JSON, the version before the schema", () => {
    const bytes = new Uint8Array([
      ...utf8('{"a": "'),
      0xff,
      ...utf8("x".repeat(40)),
      ...utf8('"}\n'),
      0xff,
      ...utf8("{oops\n"),
    ]);
    const { items } = decodeAll(bytes, { maxLineBytes: 32 });
    assert.deepEqual(codes(items), [
      [1, "line_too_long"],
      [2, "invalid_utf8"],
    ]);
    // A newer MAJOR wins over a broken schema; an array is not an object, whatever it holds.
    const { items: more } = decodeAll(
      ndjson('{"schema_version": 2}', '[{"schema_version": 2}]', '{"schema_version": 2.0, "event": 5}'),
    );
    assert.deepEqual(codes(more), [
      [1, "unsupported_version"],
      [2, "schema_violation"],
      [3, "unsupported_version"],
    ]);
  });

  it("rejects what RFC 8259 rejects: NaN, Infinity, trailing commas, comments, single quotes", () => {
    const step = JSON.stringify(known("train.step", 1));
    const bad = [
      step.replace('"loss":2.25', '"loss":NaN'),
      step.replace('"loss":2.25', '"loss":Infinity'),
      step.replace("}", ",}"),
      `${step} // note`,
      "{'a': 1}",
    ];
    assert.deepEqual(
      codes(decodeAll(ndjson(...bad)).items).map(([, code]) => code),
      Array(5).fill("invalid_json"),
    );
  });

  it("validates exactly: no coercion, but 5.0 is the integer 5", () => {
    const { items } = decodeAll(
      ndjson(known("phase.started", "1" as unknown as number), known("train.step", 1, { step: true })),
    );
    assert.deepEqual(codes(items), [
      [1, "schema_violation"],
      [2, "schema_violation"],
    ]);
    const reader = new StreamReader();
    reader.feed(ndjson(known("train.step", 1)).replace('"step":5', '"step":5.0'));
    assert.equal(reader.toState().runs[0]?.step, 5);
    assert.match(canonicalStringify(reader.toState()), /"step":5,/);
  });

  it("delivers an unknown event with its fields, and keeps unknown fields of known events", () => {
    const { items } = decodeAll(
      ndjson(line("model.exported", 1, { format: "onnx" }), known("phase.started", 2, { x_gpu: "a100" })),
    );
    assert.deepEqual(kinds(items), ["unknown", "event"]);
    assert.equal(items[0]?.kind === "unknown" && items[0].event["format"], "onnx");
    assert.equal(items[1]?.kind === "event" && (items[1].event as WithExtensions<Line>).x_gpu, "a100");
  });

  it("does not mistake Object.prototype's names for events", () => {
    const { items } = decodeAll(ndjson(line("constructor", 1), line("__proto__", 2), line("to.string", 3)));
    assert.deepEqual(codes(items), [
      [1, "schema_violation"],
      [2, "schema_violation"],
    ]); // not noun.verb
    assert.deepEqual(kinds(items).at(-1), "unknown");
  });

  it("reaches the verdict of every case in the suite's validation-cases.json", () => {
    const { cases } = JSON.parse(readFileSync(path.join(SUITE_DIR, "validation-cases.json"), "utf8")) as {
      cases: { id: string; line: string; verdict: "valid" | "unknown" | "invalid" }[];
    };
    assert.ok(cases.length > 20);
    for (const testCase of cases) {
      const [item] = new Decoder().feed(`${testCase.line}\n`);
      const verdict = item?.kind === "event" ? "valid" : item?.kind === "unknown" ? "unknown" : "invalid";
      assert.equal(
        verdict,
        testCase.verdict,
        `${testCase.id}: ${item?.kind === "diagnostic" ? item.diagnostic.message : ""}`,
      );
    }
  });

  it("quotes at most 80 characters of the offending text", () => {
    const { items } = decodeAll(ndjson("x".repeat(500)));
    const message = items[0]?.kind === "diagnostic" ? items[0].diagnostic.message : "";
    assert.ok(message.includes(`${JSON.stringify("x".repeat(80))}...`), message);
    assert.ok(!message.includes("x".repeat(81)));
  });
});

describe("Decoder: framing", () => {
  it("skips a BOM at offset 0 only, and counts it in consumed_bytes", () => {
    const body = ndjson(known("phase.started", 1));
    const { decoder, items } = decodeAll(utf8(`\uFEFF${body}\uFEFF${body}`));
    assert.deepEqual(codes(items), [[2, "invalid_json"]]);
    assert.equal(decoder.consumedBytes, 3 + 2 * utf8(body).length + 3);
  });

  it("skips a BOM split across chunks", () => {
    const bytes = utf8(`\uFEFF${ndjson(known("phase.started", 1))}`);
    const decoder = new Decoder();
    const items = [bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)].flatMap((chunk) =>
      decoder.feed(chunk),
    );
    assert.deepEqual(kinds(items), ["event"]);
  });

  it("does not count a BOM split across chunks against the limit of the first line", () => {
    const first = JSON.stringify(known("phase.started", 1));
    const bytes = utf8(`\uFEFF${first}\n`);
    const decoder = new Decoder({ maxLineBytes: utf8(first).length });
    const items = [bytes.subarray(0, 1), bytes.subarray(1)].flatMap((chunk) => decoder.feed(chunk));
    assert.deepEqual(kinds(items), ["event"]);
  });

  it("reads a line nesting 128 levels and refuses one nesting 129, wherever the depth is", () => {
    const nest = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
    const text = ndjson(
      JSON.stringify(known("phase.started", 1)).replace("}", `,"x_deep":${nest(127)}}`),
      JSON.stringify(known("phase.started", 2)).replace("}", `,"x_deep":${nest(128)}}`),
      JSON.stringify(known("phase.started", 3)).replace("}", `,"x_wide":[${"[0],".repeat(300)}[0]]}`),
    );
    const { items } = decodeAll(text);
    assert.deepEqual(codes(items), [[2, "invalid_json"]]);
    assert.equal(items.length, 3);
  });

  it("does not skip a BOM when resuming past offset 0", () => {
    const decoder = new Decoder({ offset: 10, lines: 2 });
    assert.deepEqual(codes(decoder.feed(utf8(`\uFEFF${ndjson(known("phase.started", 1))}`))), [[3, "invalid_json"]]);
  });

  it("accepts \\r\\n and counts blank lines without diagnostics", () => {
    const text = [
      JSON.stringify(known("phase.started", 1)),
      "",
      "  \t ",
      JSON.stringify(known("phase.ended", 2)),
      "\r",
      "",
    ].join("\r\n");
    const { decoder, items } = decodeAll(text);
    assert.deepEqual(kinds(items), ["event", "event", "diagnostic"]);
    assert.deepEqual(codes(items), [[5, "invalid_json"]]); // "\r\r\n": one `\r` is removed, not two
    assert.equal(decoder.lines, 5);
  });

  it("keeps the partial tail and reports its size", () => {
    const { decoder, items } = decodeAll(`${ndjson(known("phase.started", 1))}{"torn": `);
    assert.equal(items.length, 1);
    assert.equal(decoder.partialTailBytes, utf8('{"torn": ').length);
    assert.deepEqual(kinds(decoder.feed("1}\n")), ["diagnostic"]);
    assert.equal(decoder.partialTailBytes, 0);
  });

  it("copies the tail it keeps: a caller may reuse its buffer (a Node Buffer's slice is a view)", () => {
    const decoder = new Decoder();
    const text = JSON.stringify(known("phase.started", 1));
    const buffer = Buffer.from(text.slice(0, 20));
    assert.deepEqual(decoder.feed(buffer), []);
    buffer.fill(0x78);
    assert.deepEqual(kinds(decoder.feed(`${text.slice(20)}\n`)), ["event"]);
  });

  it("gives the same result for a stream split at every byte, or fed byte by byte", () => {
    const text =
      "\uFEFF" +
      ndjson(
        known("run.started", 1, { producer: { name: "träner 日本 🚀", version: "1" } }),
        known("phase.started", 2, { phase: "train" }),
        "",
        known("train.step", 3, { metrics: { μ: 0.5, "🙂": null } }),
        "not json: ∑",
        known("phase.ended", 5, { phase: "train" }),
      ) +
      '{"partial": "é';
    const bytes = utf8(text);
    const whole = new StreamReader();
    whole.feed(bytes);
    const expected = canonicalStringify(whole.toState());
    assert.match(expected, /"seq_gaps":\[\[4,5\]\]/);
    for (let split = 0; split <= bytes.length; split++) {
      const reader = new StreamReader();
      reader.feed(bytes.subarray(0, split));
      reader.feed(bytes.subarray(split));
      assert.equal(canonicalStringify(reader.toState()), expected, `split at byte ${split}`);
    }
    const byByte = new StreamReader();
    for (let index = 0; index < bytes.length; index++) byByte.feed(bytes.subarray(index, index + 1));
    assert.equal(canonicalStringify(byByte.toState()), expected);
  });

  it("decodes a chunk of many blocks as it decodes each line fed alone", () => {
    const lines: (Record<string, unknown> | string)[] = [];
    for (let seq = 1; seq <= 600; seq++) {
      if (seq % 100 === 7)
        lines.push(known("phase.started", seq, { x_note: "é".repeat(20_000) })); // longer than a block
      else if (seq % 100 === 50)
        lines.push("x".repeat(70_000)); // over the limit below
      else if (seq % 100 === 60)
        lines.push(`{"seq": ${seq}, "note": "é"}`); // no envelope
      else if (seq % 100 === 70) lines.push(`{"seq": ${seq},}`);
      else lines.push(known("train.step", seq, { step: seq, metrics: { [seq > 100 && seq < 200 ? "μ" : "mu"]: seq } }));
    }
    const bytes = utf8(ndjson(...lines).replace(/\n/, "\r\n"));
    const invalid = bytes.indexOf(0xa9, bytes.length >> 1); // one byte of an é: that line is not UTF-8
    bytes[invalid] = 0xff;
    const options = { maxLineBytes: 60_000 };
    const whole = new Decoder(options);
    const items = whole.feed(bytes);
    const oneByOne = new Decoder(options);
    const expected: DecodedLine[] = [];
    for (let start = 0; start < bytes.length; ) {
      const end = bytes.indexOf(0x0a, start) + 1;
      expected.push(...oneByOne.feed(bytes.subarray(start, end)));
      start = end;
    }
    assert.deepEqual(items, expected);
    assert.deepEqual(
      new Set(codes(items).map(([, code]) => code)),
      new Set(["line_too_long", "invalid_utf8", "schema_violation", "invalid_json"]),
    );
    assert.equal(whole.consumedBytes, bytes.length);
    assert.equal(whole.lines, 600);
  });

  it("never holds a long line whole, and reads the line after it", () => {
    const limit = 1 << 20;
    const decoder = new Decoder();
    const chunk = utf8("x".repeat(64 * 1024));
    const items: DecodedLine[] = [];
    let mostHeld = 0;
    for (let sent = 0; sent < 5 * limit; sent += chunk.length) {
      items.push(...decoder.feed(chunk));
      mostHeld = Math.max(mostHeld, decoder.heldBytes);
    }
    items.push(...decoder.feed(`\n${ndjson(known("phase.started", 1))}`));
    assert.ok(mostHeld <= limit, `held ${mostHeld} bytes`);
    assert.deepEqual(codes(items), [[1, "line_too_long"]]);
    assert.deepEqual(kinds(items), ["diagnostic", "event"]);
    assert.equal(decoder.consumedBytes, 5 * limit + 1 + utf8(ndjson(known("phase.started", 1))).length);
    assert.equal(decoder.heldBytes, 0);
  });

  it("applies the limit to the bytes before \\n, a \\r included", () => {
    const body = JSON.stringify(known("phase.started", 1));
    const size = utf8(body).length;
    assert.deepEqual(kinds(decodeAll(`${body}\n`, { maxLineBytes: size }).items), ["event"]);
    assert.deepEqual(codes(decodeAll(`${body}\r\n`, { maxLineBytes: size }).items), [[1, "line_too_long"]]);
    assert.deepEqual(codes(decodeAll(`${body.slice(0, 5)}|${body.slice(5)}\n`, { maxLineBytes: size }).items), [
      [1, "line_too_long"],
    ]);
  });

  it("resumes from an offset and goes on counting lines", () => {
    const first = ndjson(known("run.started", 1), "oops");
    const second = ndjson(known("phase.started", 2), "bad again");
    const reader = new StreamReader();
    reader.feed(first + second.slice(0, 10));
    const resumed = new StreamReader({ offset: reader.consumedBytes, lines: reader.lines });
    resumed.feed(utf8(first + second).subarray(reader.consumedBytes));
    const state = resumed.toState();
    assert.equal(state.consumed_bytes, utf8(first + second).length);
    // A fresh state: the resumed reader has not seen seq 1 of r1, hence the gap.
    assert.deepEqual(
      state.diagnostics.map((diagnostic) => [diagnostic.line, diagnostic.code]),
      [
        [3, "seq_gap"],
        [4, "invalid_json"],
      ],
    );
    assert.equal(state.runs[0]?.events, 1);
  });
});

describe("strict mode", () => {
  it("throws a StreamError at the first diagnostic", () => {
    const decoder = new Decoder({ strict: true });
    assert.throws(
      () => decoder.feed(ndjson(known("phase.started", 1), "{nope")),
      (error: unknown) => error instanceof StreamError && error.line === 2 && error.code === "invalid_json",
    );
  });

  it("throws on the fold's diagnostics too, before applying the line", () => {
    const reader = new StreamReader({ strict: true });
    reader.feed(ndjson(known("phase.started", 1)));
    assert.throws(() => reader.feed(ndjson(known("phase.started", 3))), { name: "StreamError", code: "seq_gap" });
    assert.equal(reader.toState().runs[0]?.last_seq, 1);
  });
});
