// Small DOM helpers every part of the page uses.

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  content?: string,
  className?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (content !== undefined) node.textContent = content;
  if (className !== undefined) node.className = className;
  return node;
}

/** A value as a cell shows it: `–` for none, numbers to four significant digits. */
export function text(value: unknown): string {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toPrecision(4);
  return String(value);
}

/** A config value as the run was given it: strings as they are, anything else as JSON. */
export function configText(value: unknown): string {
  if (value === undefined) return "–";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The URL of a run's stream by its key (each part of the key encoded). */
export function streamUrl(key: string): string {
  return `runs/${encodedKey(key)}/progress.jsonl`;
}

/** The URL of a run's opening (its state and series at an offset of the stream) by its key. */
export function openingUrl(key: string): string {
  return `api/runs/${encodedKey(key)}/opening`;
}

/** A run key as a URL path: each part encoded. */
export function encodedKey(key: string): string {
  return key.split("/").map(encodeURIComponent).join("/");
}
