// tsc compiles .ts only: copy the generated standalone validators (.js + .d.ts) into dist/, or
// into the directory given (the tests' build of dashboard modules that validate has its own src/).
import { copyFile, mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

const source = new URL("../src/generated/", import.meta.url);
const given = process.argv[2];
const target =
  given === undefined ? new URL("../dist/generated/", import.meta.url) : pathToFileURL(`${path.resolve(given)}/`);
await mkdir(target, { recursive: true });
for (const name of await readdir(source)) {
  if (name.endsWith(".js") || name.endsWith(".d.ts")) await copyFile(new URL(name, source), new URL(name, target));
}
