// For each text given as JSON on stdin (a list of strings), print what the TypeScript
// `printable` makes of it, as a JSON string, one per line.
import { printable } from "../../src/printable.js";
import { answer, requests } from "./requests.js";

for (const text of requests<string>()) answer(printable(text));
