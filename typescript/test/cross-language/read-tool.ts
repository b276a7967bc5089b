// Runs the command given as JSON on stdin (a list: program, then arguments), reads its
// standard output with `fromReadable`, and prints the latest run's status, trial count and
// best trial as one JSON line, then how many diagnostics the reader had.
import { spawn } from "node:child_process";
import { fromReadable } from "../../src/readable.js";
import { StreamReader } from "../../src/reader.js";
import { answer, requests } from "./requests.js";

const [program = "", ...args] = requests<string>();
const child = spawn(program, args, { stdio: ["ignore", "pipe", "ignore"] });
const reader = new StreamReader();
for await (const chunk of fromReadable(child.stdout)) reader.feed(chunk);
const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
const run = reader.latestRun();
answer({ code, status: run?.status, trials: run?.trials });
answer(reader.toState().diagnostics.length);
