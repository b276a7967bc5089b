// For each request given as JSON on stdin ({kind, value}), print what the TypeScript formatter
// of that kind (duration, quantity, rate) writes, as a JSON string, one per line.
import { formatDuration, formatQuantity, formatRate } from "../../src/humanize.js";
import { answer, requests } from "./requests.js";

const FORMATTERS = { duration: formatDuration, quantity: formatQuantity, rate: formatRate };

for (const { kind, value } of requests<{ kind: keyof typeof FORMATTERS; value: number }>()) {
  answer(FORMATTERS[kind](value));
}
