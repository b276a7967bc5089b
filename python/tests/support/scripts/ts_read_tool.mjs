// Runs the command given as JSON on stdin (an array: program, then arguments), reads its
// standard output with `fromReadable`, and prints the latest run's status, trial count and
// best trial as one JSON line, then how many diagnostics the reader had.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { StreamReader } from "../../../../typescript/dist/index.js";
import { fromReadable } from "../../../../typescript/dist/node.js";

const [program, ...args] = JSON.parse(readFileSync(0, "utf8"));
const child = spawn(program, args, { stdio: ["ignore", "pipe", "ignore"] });
const reader = new StreamReader();
for await (const chunk of fromReadable(child.stdout)) reader.feed(chunk);
const code = await new Promise((resolve) => child.on("close", resolve));
const run = reader.latestRun();
process.stdout.write(`${JSON.stringify({ code, status: run?.status, trials: run?.trials })}\n`);
process.stdout.write(`${JSON.stringify(reader.toState().diagnostics.length)}\n`);
