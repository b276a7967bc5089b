// The public door to the generated types: hand-written code imports types from here.
import type { Envelope } from "./generated/types.js";

export type * from "./generated/types.js";

/**
 * A line whose envelope is valid but whose event name this version does not know.
 *
 * Forward compatibility: a newer minor version may add events; they are delivered with
 * all their fields instead of being rejected.
 */
export interface UnknownEvent extends Envelope {
  [field: string]: unknown;
}

/**
 * An event type with a producer's own `x_` fields. The generated event types list the
 * contract's fields only (a typo in a field name is a compile error); every other field
 * of a line is still kept at runtime.
 */
export type WithExtensions<T> = T & { readonly [field: `x_${string}`]: unknown };
