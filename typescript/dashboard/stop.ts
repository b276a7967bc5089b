// The stop button: asks for a reason, then asks the server to stop the run.
import { encodedKey } from "./dom.js";
import { STOP_DEFAULT_REASON, stopOutcomeText, stopPrompt } from "./run-view.js";
import type { ServerFetch } from "./token.js";

export interface StopOutcome {
  accepted: boolean;
  /** The line the page shows: requested, or refused with the server's answer. */
  text: string;
}

/** Stops the run at `key` once the user gave a reason; undefined when they cancelled. */
export async function requestStop(
  key: string,
  search: boolean,
  serverFetch: ServerFetch,
  stopChannels: readonly string[] | null = null,
): Promise<StopOutcome | undefined> {
  const reason = prompt(stopPrompt(search, stopChannels), STOP_DEFAULT_REASON);
  if (reason === null) return undefined;
  const response = await serverFetch(`api/runs/${encodedKey(key)}/stop`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ reason, requested_by: "dashboard" }),
  });
  const refusal = response.ok ? "" : await response.text();
  return { accepted: response.ok, text: stopOutcomeText(search, response.ok, refusal) };
}
