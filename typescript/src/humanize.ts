// Durations and rates for people: `4.2s`, `3:07`, `1:02:03`; `69.5k steps/s`, `2.5s/step`.
// The same strings as Python's trainwire.contract.humanize: rounding is done on integers, half up,
// because `toFixed` and Python's `format` round differently.

/** Three significant digits: enough to follow a rate, few enough to read at a glance. */
const SIGNIFICANT = 3;
/** The suffix of each power of a thousand. */
const SUFFIXES = ["", "k", "M", "G", "T"] as const;

/** `4.2s` under a minute, `M:SS` under an hour, else `H:MM:SS` (negative counts as 0). */
export function formatDuration(seconds: number): string {
  const tenths = roundHalfUp(Math.max(0, seconds) * 10);
  if (tenths < 600) return `${Math.floor(tenths / 10)}.${tenths % 10}s`;
  const whole = roundHalfUp(Math.max(0, seconds));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const secs = String(whole % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${secs}` : `${minutes}:${secs}`;
}

/** Three significant digits, `k`/`M`/`G`/`T` from a thousand on, never an exponent. */
export function formatQuantity(value: number): string {
  if (value === 0) return "0";
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf"; // as Python
  const sign = value < 0 ? "-" : "";
  const [digits, exponent] = threeDigits(Math.abs(value));
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits.replace(/0+$/, "")}`;
  const scale = Math.min(Math.floor(exponent / 3), SUFFIXES.length - 1);
  const whole = exponent - 3 * scale + 1; // digits before the point: 1 to 3 (more past the last suffix)
  const integer = digits.slice(0, whole).padEnd(whole, "0");
  const fraction = digits.slice(whole).replace(/0+$/, "");
  return sign + integer + (fraction ? `.${fraction}` : "") + SUFFIXES[scale];
}

/** `69.5k steps/s` from one step a second on; below it, how long a step takes (`2.5s/step`). */
export function formatRate(stepsPerS: number): string {
  if (stepsPerS >= 1 || stepsPerS <= 0) return `${formatQuantity(stepsPerS)} steps/s`;
  return `${formatDuration(1 / stepsPerS)}/step`;
}

/** `value` (> 0) rounded to three significant digits: the digits and the power of ten of the first. */
function threeDigits(value: number): [string, number] {
  let exponent = Math.floor(Math.log10(value));
  // One exact power of ten and one IEEE operation: the same result in Python.
  const shift = exponent - (SIGNIFICANT - 1);
  let mantissa = roundHalfUp(shift >= 0 ? value / 10 ** shift : value * 10 ** -shift);
  if (mantissa >= 10 ** SIGNIFICANT) {
    // 999.5 rounds up to the next power of ten
    mantissa = Math.floor(mantissa / 10);
    exponent += 1;
  }
  return [String(mantissa), exponent];
}

/** To the nearest integer, halves up (Python: `math.floor(value + 0.5)`). */
function roundHalfUp(value: number): number {
  return Math.floor(value + 0.5);
}
