// The token `trainwire serve` printed in the page's URL, and the requests that carry it.

const TOKEN_KEY = "trainwire-token";

/** The token comes in the URL the server printed; kept for this tab only, and out of the address bar. */
export function takeToken(): string {
  const url = new URL(location.href);
  const given = url.searchParams.get("token");
  if (given !== null) {
    sessionStorage.setItem(TOKEN_KEY, given);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

export type ServerFetch = (url: string, init?: RequestInit) => Promise<Response>;

/** A fetch whose every request carries `token`: the runs, the streams and stop all need it. */
export function fetchWithToken(token: string): ServerFetch {
  const authorised: Record<string, string> = { "X-Trainwire-Token": token };
  return (url, init = {}) =>
    fetch(url, { ...init, headers: { ...authorised, ...(init.headers as Record<string, string> | undefined) } });
}
