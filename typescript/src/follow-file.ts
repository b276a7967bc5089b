// Follow a growing file (tail -F), in chunks of bytes.
import { constants } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import { sleep } from "./sleep.js";

export interface FollowFileOptions {
  /** Start at this byte offset (a reader's `consumedBytes`): only newer bytes are read. Default 0. */
  offset?: number | undefined;
  /** How often to look for new bytes when there are none. Default 250 ms. */
  pollIntervalMs?: number | undefined;
  /** Stops the iteration (it then ends without an error). */
  signal?: AbortSignal | undefined;
  /**
   * Called when the file was truncated or replaced (or is shorter than `offset`): the
   * chunks that follow start again at offset 0, so a reader must start afresh.
   */
  onReset?: (() => void) | undefined;
  /** The most bytes one chunk holds. Default 1 MiB. */
  chunkBytes?: number | undefined;
}

/**
 * The path is not a regular file (a FIFO, a device, a socket or a directory): opened, a FIFO
 * would wait for a writer for ever and a device would never end. Python's `NotARegularFile`.
 */
export class NotARegularFile extends Error {
  constructor(readonly path: string) {
    super(`${path}: not a regular file`);
    this.name = "NotARegularFile";
  }
}

const DEFAULT_POLL_MS = 250;
const DEFAULT_CHUNK_BYTES = 1 << 20;

/**
 * Yields the bytes of `path` as they are appended, until `signal` aborts.
 *
 * Survives the file not existing yet, truncation and replacement (rotation). Reading
 * resumes at `offset` without touching the bytes before it. The file is opened without
 * blocking and only when it is a regular file, at the start and once replaced: anything
 * else throws `NotARegularFile`, as the server's checked opening refuses it.
 */
export async function* followFile(
  path: string,
  options: FollowFileOptions = {},
): AsyncGenerator<Uint8Array, void, undefined> {
  const pollMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  const signal = options.signal;
  let position = options.offset ?? 0;
  let file: FileHandle | undefined;
  let identity = "";
  try {
    while (signal?.aborted !== true) {
      if (file === undefined) {
        file = await openIfExists(path);
        if (file === undefined) {
          if (!(await sleep(pollMs, signal))) return;
          continue;
        }
        identity = identityOf(await file.stat());
      }
      const size = (await file.stat()).size;
      if (size < position) {
        position = 0; // truncated in place
        options.onReset?.();
      }
      if (size > position) {
        const chunk = new Uint8Array(Math.min(chunkBytes, size - position));
        const { bytesRead } = await file.read(chunk, 0, chunk.length, position);
        if (bytesRead > 0) {
          position += bytesRead;
          yield bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead);
          continue; // more may be waiting: read before sleeping
        }
      }
      // Nothing new in this file: has another file taken its name?
      const current = await statIfExists(path);
      if (current !== undefined && identityOf(current) !== identity) {
        await file.close();
        file = undefined;
        position = 0;
        options.onReset?.();
        continue;
      }
      if (!(await sleep(pollMs, signal))) return;
    }
  } finally {
    await file?.close();
  }
}

async function openIfExists(path: string): Promise<FileHandle | undefined> {
  let file: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for ever
    file = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  if (!(await file.stat()).isFile()) {
    await file.close();
    throw new NotARegularFile(path);
  }
  return file;
}

async function statIfExists(path: string): Promise<Awaited<ReturnType<typeof stat>> | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function identityOf(info: { dev: number | bigint; ino: number | bigint }): string {
  return `${info.dev}:${info.ino}`;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}
