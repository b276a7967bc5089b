// Waiting while a browser page is hidden, so that a background tab does not poll. No Node API.
import { isAborted } from "./sleep.js";

/** Resolves `true` once the page is visible (at once outside a browser), `false` if `signal` aborts first. */
export function whenVisible(signal?: AbortSignal): Promise<boolean> {
  const page = (globalThis as { document?: Document }).document;
  if (page === undefined || page.visibilityState !== "hidden") return Promise.resolve(true);
  if (isAborted(signal)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const finish = (visible: boolean): void => {
      page.removeEventListener("visibilitychange", onChange);
      signal?.removeEventListener("abort", onAbort);
      resolve(visible);
    };
    const onChange = (): void => {
      if (page.visibilityState !== "hidden") finish(true);
    };
    const onAbort = (): void => finish(false);
    page.addEventListener("visibilitychange", onChange);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
