// The server's config (`GET /api/config`) as the page uses it. Pure: checked in node.
import { printable } from "../src/printable.js";
import { isRecord } from "./checks.js";

export interface ServerConfig {
  version: string;
  read_only: boolean;
}

/** Until the server has answered, the page is read-only: no stop button. */
export const UNKNOWN_CONFIG: ServerConfig = { version: "", read_only: true };

/** The server's config as the page uses it: read-only unless the server says plainly it is not. */
export function checkedConfig(answer: unknown): ServerConfig {
  const given = isRecord(answer) ? answer : {};
  return {
    version: typeof given["version"] === "string" ? printable(given["version"]) : "",
    read_only: given["read_only"] !== false,
  };
}
