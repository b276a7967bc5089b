// Chunks from a Node stream (a subprocess's stdout) or any async iterable of bytes.

/**
 * Yields the chunks of `stream` as `Uint8Array`s until it ends. Strings (a stream with
 * an encoding set) are encoded back to UTF-8, so byte offsets stay exact.
 */
export async function* fromReadable(
  stream: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<Uint8Array, void, undefined> {
  const encoder = new TextEncoder();
  for await (const chunk of stream) yield typeof chunk === "string" ? encoder.encode(chunk) : chunk;
}
