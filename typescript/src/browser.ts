// trainwire/browser: follow a stream over HTTP. No Node API.
export { fromFetch, type FromFetchOptions } from "./fetch-source.js";
export { FetchError, type FetchErrorCode } from "./errors.js";
