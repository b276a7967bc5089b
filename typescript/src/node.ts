// trainwire/node: sources and the stop helper that need Node's APIs.
export { type FollowFileOptions, followFile } from "./follow-file.js";
export { fromReadable } from "./readable.js";
export { type RequestStopOptions, requestStop, STOP_FILE, STOP_FILE_NAME } from "./stop.js";
