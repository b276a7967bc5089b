// An abortable pause with no Node API (the browser entry uses it too).

/** Waits `ms`; resolves `false` at once when `signal` is (or becomes) aborted, else `true`. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A function, so that TypeScript does not keep a loop condition's narrowing of `aborted`. */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
