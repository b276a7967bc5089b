// Text from a stream made safe to show: the characters that drive a terminal or reorder a page
// written as escapes (`\x1b`, `\u202e`), everything else as it is. Browser-safe. The Python twin
// (trainwire.contract.printable) holds the same table and gives the same string for every code point.

/**
 * The escaped code points, as inclusive ranges: C0 controls, DEL and C1 controls, the Arabic
 * letter mark, zero-width characters and the directional marks, the line and paragraph
 * separators, the bidi embeddings and overrides, word joiner, invisible operators and the bidi
 * isolates, the byte order mark, the interlinear annotation controls.
 */
export const ESCAPED_RANGES: readonly (readonly [low: number, high: number])[] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
  [0x061c, 0x061c],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2069],
  [0xfeff, 0xfeff],
  [0xfff9, 0xfffb],
];

const hex = (code: number, width: number): string => code.toString(16).padStart(width, "0");
const ESCAPED = new RegExp(
  `[${ESCAPED_RANGES.map(([low, high]) => `\\u{${hex(low, 4)}}-\\u{${hex(high, 4)}}`).join("")}]`,
  "gu",
);

/** `text` with the characters of `ESCAPED_RANGES` written as `\xNN` (below 0x100) or `\uNNNN`. */
export function printable(text: string): string {
  return text.replace(ESCAPED, (char) => {
    const code = char.codePointAt(0) as number;
    return code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
  });
}
