// trainwire/node: sources and the stop helper that need Node's APIs.
export { type FollowFileOptions, followFile, NotARegularFile } from "./follow-file.js";
export { fromReadable } from "./readable.js";
export {
  type RequestStopAndWaitOptions,
  type RequestStopOptions,
  requestStop,
  requestStopAndWait,
  STOP_FILE,
  STOP_FILE_NAME,
  type StopOutcome,
} from "./stop.js";
