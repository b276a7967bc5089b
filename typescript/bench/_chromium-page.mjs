// The page of reader-throughput-chromium.mjs, bundled with the reader: fetch the stream once,
// then alternate the reader and the baseline on its bytes.
import { alternate, CHUNK_BYTES, readAndFold, splitAndParse } from "./_rounds.mjs";

globalThis.measure = async (rounds) => {
  const bytes = new Uint8Array(await (await fetch("/stream")).arrayBuffer());
  const chunks = (onChunk) => {
    for (let start = 0; start < bytes.length; start += CHUNK_BYTES) onChunk(bytes.subarray(start, start + CHUNK_BYTES));
  };
  return alternate(
    rounds,
    () => readAndFold(chunks),
    () => splitAndParse(new TextDecoder().decode(bytes)),
  );
};
