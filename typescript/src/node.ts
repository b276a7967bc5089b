// trainwire/node: sources and the stop helper that need Node's APIs.
export { followFile, type FollowFileOptions } from "./follow-file.js";
export { fromReadable } from "./readable.js";
export { requestStop, STOP_FILE, STOP_FILE_NAME, type RequestStopOptions } from "./stop.js";
