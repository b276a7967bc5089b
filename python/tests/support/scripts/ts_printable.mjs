// For each text given as JSON on stdin (a list of strings), print what the TypeScript
// `printable` makes of it, as a JSON string, one per line.
import { readFileSync } from "node:fs";
import { printable } from "../../../../typescript/dist/printable.js";

for (const text of JSON.parse(readFileSync(0, "utf8"))) {
  process.stdout.write(JSON.stringify(printable(text)) + "\n");
}
