// For each request given as JSON on stdin ({kind, value}), print what the TypeScript formatter
// of that kind (duration, quantity, rate) writes, as a JSON string, one per line.
import { readFileSync } from "node:fs";
import { formatDuration, formatQuantity, formatRate } from "../../../../typescript/dist/humanize.js";

const formatters = { duration: formatDuration, quantity: formatQuantity, rate: formatRate };
for (const { kind, value } of JSON.parse(readFileSync(0, "utf8"))) {
  process.stdout.write(JSON.stringify(formatters[kind](value)) + "\n");
}
