// The page's routes, read from and written to the address's hash: `#/` the runs list,
// `#/run/<key>` one run, `#/compare?run=<key>&run=<key>` runs compared. Pure: checked in node.

export type Route =
  | { view: "runs" }
  | { view: "run"; key: string }
  | { view: "compare"; keys: string[] }
  /** A hash the page does not know: no view is shown. */
  | { view: "none" };

export function parseRoute(locationHash: string): Route {
  const hash = locationHash || "#/";
  if (hash === "#/" || hash === "#") return { view: "runs" };
  if (hash.startsWith("#/run/")) return { view: "run", key: decodeURIComponent(hash.slice("#/run/".length)) };
  if (hash.startsWith("#/compare"))
    return { view: "compare", keys: new URLSearchParams(hash.split("?")[1] ?? "").getAll("run") };
  return { view: "none" };
}

export function runHash(key: string): string {
  return `#/run/${encodeURIComponent(key)}`;
}

export function compareHash(keys: Iterable<string>): string {
  return `#/compare?${[...keys].map((key) => `run=${encodeURIComponent(key)}`).join("&")}`;
}
