// trainwire/browser: follow a stream over HTTP. No Node API.

export { FetchError, type FetchErrorCode } from "./errors.js";
export { type FromFetchOptions, fromFetch } from "./fetch-source.js";
