// Shared by the bench scripts: timing, chunked file reading, the JSON report on stdout.
import { closeSync, openSync, readSync } from "node:fs";
import { CHUNK_BYTES } from "./_rounds.mjs";

export { CHUNK_BYTES, timed } from "./_rounds.mjs";

/** Calls `onChunk` with each chunk of the file from `offset`, each a fresh buffer (a reader may keep it). */
export function readChunks(path, onChunk, offset = 0) {
  const fd = openSync(path, "r");
  try {
    let position = offset;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, position);
      if (read === 0) return;
      position += read;
      onChunk(read === CHUNK_BYTES ? chunk : chunk.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
}

/** The measurement for the Python side, as one JSON line on stdout. */
export function report(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
