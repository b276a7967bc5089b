// Retry delays: exponential, capped, with jitter so that many dashboards do not poll in step.

/** The delay before retry number `failures` (1, 2, ...): base * 2^(failures-1), capped, times 0.5..1. */
export function backoffMs(failures: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
  return ceiling * (0.5 + random() / 2);
}
