// RFC 3339 timestamps to microseconds since the epoch (Python: trainwire.contract.clock.to_timestamp_us).

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Microseconds since 1970-01-01T00:00:00Z; extra fraction digits are truncated. */
export function toTimestampUs(time: string | Date): number {
  if (time instanceof Date) {
    const millis = time.getTime();
    if (Number.isNaN(millis)) throw new RangeError("invalid Date");
    return millis * 1000;
  }
  const match = RFC3339.exec(time);
  if (match === null) throw new RangeError(`not an RFC 3339 time: ${JSON.stringify(time)}`);
  const [, year, month, day, hour, minute, second, fraction = "", , sign, offsetHours, offsetMinutes] = match;
  // setUTCFullYear, unlike Date.UTC, does not map the years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second), 0);
  const millis = date.getTime();
  const micros = Number(fraction.slice(0, 6).padEnd(6, "0"));
  const offset = sign === undefined ? 0 : (sign === "-" ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes));
  return (millis - offset * 60_000) * 1000 + micros;
}
