// Bytes to validated events, following docs/reader-rules.md sections 1 and 2 exactly.
import { StreamError } from "./errors.js";
import { validateEnvelope, validateEvent } from "./generated/validate-line.js";
import type { Validator } from "./generated/validator.js";
import type { Diagnostic, Line, UnknownEvent } from "./types.js";

/** The default line limit: 1 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 1_048_576;
/** The deepest a line may nest (its object is level 1); deeper is `invalid_json` (reader rule 2.3). */
export const MAX_NESTING = 128;

export interface DecoderOptions {
  /** A longer line is skipped with `line_too_long` and never held whole. Default 1 MiB. */
  maxLineBytes?: number | undefined;
  /** Throw a `StreamError` at the first diagnostic instead of recording it. */
  strict?: boolean | undefined;
  /** Resume at this byte offset (a previous reader's `consumedBytes`). Default 0. */
  offset?: number | undefined;
  /** The lines counted before `offset`, so that line numbers go on. Default 0. */
  lines?: number | undefined;
}

/** A known v1 event, validated against its schema. */
export interface DecodedEvent {
  readonly kind: "event";
  readonly line: number;
  readonly event: Line;
}

/** An event name this version does not know, with a valid envelope. */
export interface DecodedUnknown {
  readonly kind: "unknown";
  readonly line: number;
  readonly event: UnknownEvent;
}

/** A line that was skipped. */
export interface DecodedDiagnostic {
  readonly kind: "diagnostic";
  readonly line: number;
  readonly diagnostic: Diagnostic;
}

/** What one complete, non-blank line decoded to. */
export type DecodedLine = DecodedEvent | DecodedUnknown | DecodedDiagnostic;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const OPEN_BRACE = 0x7b;
const BOM = [0xef, 0xbb, 0xbf] as const;
const QUOTE_CHARS = 80;
// Enough bytes of an over-long line to quote its first 80 characters.
const KEPT_PREFIX_BYTES = QUOTE_CHARS * 4;
const BLANK = /^[ \t]*$/;
// Complete lines are decoded to text a block at a time: one decoder call for many lines, and
// a string small enough for V8's young generation (a 1 MiB one goes to the large-object
// space and stays there until a full collection: tens of MB held by dead chunks).
const BLOCK_BYTES = 1 << 15;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

// A Map, not the frozen object: `event` names such as "constructor" must not hit the prototype.
const EVENT_VALIDATORS: ReadonlyMap<string, Validator<Line>> = new Map(Object.entries(validateEvent));

/**
 * An incremental NDJSON decoder: feed it chunks split anywhere, get the complete lines
 * back as validated events, unknown events and diagnostics, in stream order.
 */
export class Decoder {
  readonly maxLineBytes: number;
  readonly strict: boolean;
  #consumed: number;
  #lines: number;
  // The partial tail: its first bytes (all of them while under the limit) and its length.
  #tail: Uint8Array[] = [];
  #tailHeld = 0;
  #tailLength = 0;
  #lastName = "";
  #lastValidator: Validator<Line> | undefined = undefined;

  constructor(options: DecoderOptions = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.strict = options.strict ?? false;
    this.#consumed = options.offset ?? 0;
    this.#lines = options.lines ?? 0;
  }

  /** Bytes up to and including the last `\n`: the offset to resume from. */
  get consumedBytes(): number {
    return this.#consumed;
  }

  /** Bytes after the last `\n`: a line still being written, or torn. */
  get partialTailBytes(): number {
    return this.#tailLength;
  }

  /** Bytes of the partial tail held in memory: at most the line limit, a prefix beyond it. */
  get heldBytes(): number {
    return this.#tailHeld;
  }

  /** Complete lines read, blank and skipped ones included. */
  get lines(): number {
    return this.#lines;
  }

  /** Decode one chunk; returns what the lines it completes decoded to. */
  feed(chunk: Uint8Array | string): DecodedLine[] {
    const bytes = typeof chunk === "string" ? utf8Encoder.encode(chunk) : chunk;
    const out: DecodedLine[] = [];
    let start = 0;
    if (this.#tailLength > 0) {
      const newline = bytes.indexOf(NEWLINE);
      if (newline === -1) {
        this.#keepTail(bytes);
        return out;
      }
      this.#keepTail(bytes.subarray(0, newline));
      this.#finishTail(out);
      start = newline + 1;
    }
    const last = bytes.lastIndexOf(NEWLINE);
    while (start <= last) {
      // Blocks of complete lines of about BLOCK_BYTES (or one longer line).
      let end = last - start <= BLOCK_BYTES ? last : bytes.lastIndexOf(NEWLINE, start + BLOCK_BYTES);
      if (end < start) end = bytes.indexOf(NEWLINE, start + BLOCK_BYTES);
      this.#decodeLines(bytes, start, end, out);
      start = end + 1;
    }
    if (start < bytes.length) this.#keepTail(bytes.subarray(start));
    return out;
  }

  #keepTail(bytes: Uint8Array): void {
    const length = this.#tailLength + bytes.length;
    if (length <= this.maxLineBytes || (length <= this.maxLineBytes + BOM.length && this.#tailStartsWithBom(bytes))) {
      this.#tail.push(copy(bytes, 0, bytes.length)); // the caller may reuse its buffer
      this.#tailHeld += bytes.length;
    } else {
      // Over the limit: only the first bytes are kept (for the message); the rest is counted.
      if (this.#tailHeld > KEPT_PREFIX_BYTES) {
        this.#tail = [copy(concat(this.#tail, this.#tailHeld), 0, KEPT_PREFIX_BYTES)];
        this.#tailHeld = KEPT_PREFIX_BYTES;
      }
      const room = KEPT_PREFIX_BYTES - this.#tailHeld;
      if (room > 0 && bytes.length > 0) {
        const kept = copy(bytes, 0, room);
        this.#tail.push(kept);
        this.#tailHeld += kept.length;
      }
    }
    this.#tailLength = length;
  }

  /** Whether the tail (with `next` after it) starts the stream with a BOM, which the line limit does not count. */
  #tailStartsWithBom(next: Uint8Array): boolean {
    if (this.#consumed !== 0) return false;
    const head = concat(
      [...this.#tail, next.subarray(0, BOM.length)],
      this.#tailHeld + Math.min(BOM.length, next.length),
    );
    return hasBom(head, 0, head.length);
  }

  /** The tail, completed by a `\n`, is a line. */
  #finishTail(out: DecodedLine[]): void {
    const length = this.#tailLength;
    const held = concat(this.#tail, this.#tailHeld);
    const startsStream = this.#consumed === 0;
    this.#tail = [];
    this.#tailHeld = 0;
    this.#tailLength = 0;
    this.#lines += 1;
    this.#consumed += length + 1;
    const bom = startsStream && hasBom(held, 0, held.length) ? BOM.length : 0;
    if (length - bom > this.maxLineBytes) {
      this.#emitDiagnostic(
        out,
        "line_too_long",
        `line is over the limit of ${this.maxLineBytes} bytes`,
        held.subarray(bom),
      );
      return;
    }
    this.#decodeOne(held, bom, held.length, out);
  }

  /** The complete lines in bytes[start, last], `last` being the index of the last `\n`. */
  #decodeLines(bytes: Uint8Array, start: number, last: number, out: DecodedLine[]): void {
    if (this.#consumed === 0 && hasBom(bytes, start, last)) {
      // The BOM at offset 0 belongs to no line, but counts in the consumed bytes.
      this.#consumed += BOM.length;
      start += BOM.length;
    }
    let text: string | undefined;
    try {
      // One decoder call for the whole block: far cheaper than one per line.
      text = strictUtf8.decode(bytes.subarray(start, last));
    } catch {
      text = undefined; // some line is not UTF-8: decode line by line to find it
    }
    // Every character one byte (the usual case): a line's byte offsets follow from the text's,
    // so the bytes are not searched a second time.
    const ascii = text !== undefined && text.length === last - start;
    let textStart = 0;
    while (start <= last) {
      let textEnd = -1;
      if (text !== undefined) {
        textEnd = text.indexOf("\n", textStart);
        if (textEnd === -1) textEnd = text.length;
      }
      const newline = ascii ? start + textEnd - textStart : bytes.indexOf(NEWLINE, start);
      const length = newline - start;
      this.#lines += 1;
      this.#consumed += length + 1;
      if (text === undefined) {
        if (length > this.maxLineBytes) {
          this.#emitDiagnostic(
            out,
            "line_too_long",
            `line is over the limit of ${this.maxLineBytes} bytes`,
            bytes.subarray(start, start + KEPT_PREFIX_BYTES),
          );
        } else {
          this.#decodeOne(bytes, start, newline, out);
        }
      } else {
        if (length > this.maxLineBytes) {
          this.#emitDiagnostic(
            out,
            "line_too_long",
            `line is over the limit of ${this.maxLineBytes} bytes`,
            text.slice(textStart, textStart + QUOTE_CHARS * 2),
          );
        } else {
          const crlf = length > 0 && bytes[newline - 1] === CARRIAGE_RETURN ? 1 : 0;
          this.#decodeText(text.slice(textStart, textEnd - crlf), bytes[start] === OPEN_BRACE, out);
        }
        textStart = textEnd + 1;
      }
      start = newline + 1;
    }
  }

  /** One line, bytes[start, end) without its `\n`: check UTF-8, then the rest. */
  #decodeOne(bytes: Uint8Array, start: number, end: number, out: DecodedLine[]): void {
    if (end > start && bytes[end - 1] === CARRIAGE_RETURN) end -= 1;
    const slice = bytes.subarray(start, end);
    let text: string;
    try {
      text = strictUtf8.decode(slice);
    } catch {
      this.#emitDiagnostic(out, "invalid_utf8", "line is not valid UTF-8", slice);
      return;
    }
    this.#decodeText(text, slice[0] === OPEN_BRACE, out);
  }

  /** A decoded line without its line ending: blank, JSON, object, version, schema. */
  #decodeText(text: string, startsWithBrace: boolean, out: DecodedLine[]): void {
    if (!startsWithBrace && BLANK.test(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.#emitDiagnostic(out, "invalid_json", `line is not JSON (${(error as Error).message})`, text);
      return;
    }
    if (!isShallow(text) && nestingDepth(value) > MAX_NESTING) {
      this.#emitDiagnostic(out, "invalid_json", `line nests deeper than ${MAX_NESTING} levels`, text);
      return;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      this.#emitDiagnostic(out, "schema_violation", `line is ${describe(value)}, not a JSON object`, text);
      return;
    }
    const record = value as Record<string, unknown>;
    const version = record["schema_version"];
    if (typeof version === "number" && Number.isInteger(version) && version > 1) {
      this.#emitDiagnostic(out, "unsupported_version", `schema_version ${version} is newer than the supported 1`, text);
      return;
    }
    const name = record["event"];
    const validate = typeof name === "string" ? this.#validatorFor(name) : undefined;
    if (validate !== undefined) {
      if (validate(record)) out.push({ kind: "event", line: this.#lines, event: record });
      else this.#emitDiagnostic(out, "schema_violation", `${String(name)}: ${explain(validate)}`, text);
    } else if (validateEnvelope(record)) {
      out.push({ kind: "unknown", line: this.#lines, event: record as UnknownEvent });
    } else {
      this.#emitDiagnostic(out, "schema_violation", `envelope: ${explain(validateEnvelope)}`, text);
    }
  }

  /** The validator of a v1 event name, or undefined for a name this version does not know. */
  #validatorFor(name: string): Validator<Line> | undefined {
    // Consecutive lines mostly name the same event: comparing with the last name is cheaper
    // than hashing each freshly parsed string for the map.
    if (name !== this.#lastName) {
      this.#lastName = name;
      this.#lastValidator = EVENT_VALIDATORS.get(name);
    }
    return this.#lastValidator;
  }

  #emitDiagnostic(out: DecodedLine[], code: Diagnostic["code"], what: string, offending: string | Uint8Array): void {
    const diagnostic: Diagnostic = { line: this.#lines, code, message: `${what}: ${quote(offending)}` };
    if (this.strict) throw new StreamError(diagnostic);
    out.push({ kind: "diagnostic", line: this.#lines, diagnostic });
  }
}

/** Too few brackets to nest past the limit: the cheap test that spares most lines a walk. */
function isShallow(text: string): boolean {
  let brackets = 0;
  for (let at = text.indexOf("{"); at !== -1; at = text.indexOf("{", at + 1)) {
    if (++brackets > MAX_NESTING) return false;
  }
  for (let at = text.indexOf("["); at !== -1; at = text.indexOf("[", at + 1)) {
    if (++brackets > MAX_NESTING) return false;
  }
  return true;
}

/** How deep a parsed JSON value nests: 0 for a scalar, 1 for a flat object or array. */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [node, depth] = item;
    if (node === null || typeof node !== "object") continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

function hasBom(bytes: Uint8Array, start: number, end: number): boolean {
  return (
    end - start >= BOM.length && bytes[start] === BOM[0] && bytes[start + 1] === BOM[1] && bytes[start + 2] === BOM[2]
  );
}

/** A copy, also of a Node Buffer (whose own `slice` returns a view). */
function copy(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return Uint8Array.prototype.slice.call(bytes, start, end);
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1 && parts[0] !== undefined) return parts[0];
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/** The start of the offending text, at most 80 characters, as a JSON string. */
function quote(offending: string | Uint8Array): string {
  const text = typeof offending === "string" ? offending : lenientUtf8.decode(offending.subarray(0, KEPT_PREFIX_BYTES));
  const characters = Array.from(text.slice(0, QUOTE_CHARS * 2));
  const start = characters.slice(0, QUOTE_CHARS).join("");
  return JSON.stringify(start) + (characters.length > QUOTE_CHARS ? "..." : "");
}

function explain(validate: Validator<unknown>): string {
  const error = validate.errors?.[0];
  if (error === undefined) return "does not match the schema";
  const where = error.instancePath === "" ? "line" : error.instancePath;
  const params =
    error.keyword === "discriminator" || error.keyword === "additionalProperties"
      ? ` ${JSON.stringify(error.params)}`
      : "";
  return `${where} ${error.message ?? error.keyword}${params}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
