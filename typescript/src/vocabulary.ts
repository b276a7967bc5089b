// The contract's events as hand-written code meets them: a known event narrowed from an unknown
// one, and the check that a switch over event names decides every event.
import { EVENT_TITLES, type EventName } from "./generated/contract.js";
import type { Line, UnknownEvent } from "./types.js";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The two generators' event names (contract facts, typed lines) agree, or this does not compile.
true satisfies Same<EventName, Line["event"]>;

const KNOWN_NAMES: ReadonlySet<string> = new Set(Object.keys(EVENT_TITLES));

/** Whether an event is one of the contract's (then validated against its schema), not an unknown one. */
export function isKnownEvent(event: Line | UnknownEvent): event is Line {
  return KNOWN_NAMES.has(event.event);
}

/**
 * The `default` of a switch over the contract's event names: the switch fails to compile until it
 * has a case for every event (an empty case where the event has no effect there).
 */
export function assertNever(value: never): never {
  throw new TypeError(`unhandled event ${JSON.stringify(value)}`);
}
