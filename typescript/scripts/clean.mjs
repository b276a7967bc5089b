// Remove build output directories, so that a file deleted from src/ leaves no stale copy.
import { rm } from "node:fs/promises";

for (const dir of process.argv.slice(2))
  await rm(new URL(`../${dir}`, import.meta.url), { recursive: true, force: true });
