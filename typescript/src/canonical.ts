/**
 * RFC 8785 (JSON Canonicalization Scheme): no whitespace, object keys sorted by UTF-16
 * code units, strings and numbers written as `JSON.stringify` writes them.
 *
 * This is the byte-exact form of the reader state that every trainwire reader, in any
 * language, produces for the same input. Non-finite numbers are written `null` and
 * `undefined` members are left out, as `JSON.stringify` does.
 */
export function canonicalStringify(value: unknown): string {
  const parts: string[] = [];
  write(value, parts);
  return parts.join("");
}

function write(value: unknown, out: string[]): void {
  if (value === null || typeof value === "number" || typeof value === "boolean" || typeof value === "string") {
    out.push(JSON.stringify(value));
  } else if (Array.isArray(value)) {
    out.push("[");
    value.forEach((item, index) => {
      if (index > 0) out.push(",");
      if (item === undefined) out.push("null");
      else write(item, out);
    });
    out.push("]");
  } else if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    // The default sort compares UTF-16 code units: exactly RFC 8785's order.
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    out.push("{");
    keys.forEach((key, index) => {
      if (index > 0) out.push(",");
      out.push(JSON.stringify(key), ":");
      write(record[key], out);
    });
    out.push("}");
  } else {
    throw new TypeError(`${typeof value} is not a JSON value`);
  }
}
