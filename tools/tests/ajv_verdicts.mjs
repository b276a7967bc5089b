// Reads a JSON array of lines on stdin and prints the verdict of the generated ajv
// validators for each: "valid", "unknown" (unknown event, valid envelope) or "invalid".
import { readFileSync } from "node:fs";
import { validateEnvelope, validateEvent, validateLine } from "../../typescript/src/generated/validate-line.js";

function verdict(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return "invalid";
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "invalid";
  if (validateLine(value)) return "valid";
  if (!Object.hasOwn(validateEvent, value.event) && validateEnvelope(value)) return "unknown";
  return "invalid";
}

const lines = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(lines.map(verdict)));
