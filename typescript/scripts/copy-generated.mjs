// tsc compiles .ts only: copy the generated standalone validators (.js + .d.ts) into dist/.
import { copyFile, readdir } from "node:fs/promises";

const source = new URL("../src/generated/", import.meta.url);
const target = new URL("../dist/generated/", import.meta.url);
for (const name of await readdir(source)) {
  if (name.endsWith(".js") || name.endsWith(".d.ts")) await copyFile(new URL(name, source), new URL(name, target));
}
