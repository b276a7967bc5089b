// A chart's series as CSV: one row per point (series, step, time, value), for a spreadsheet.
import type { DrawnChart } from "./chart.js";

/** RFC 4180 quoting; a text starting like a formula is prefixed with `'` so a spreadsheet shows it as text. */
function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The kept points of every curve of `chart`; a restart's break (no value) is left out. Times in ISO 8601, UTC. */
export function chartCsv(chart: DrawnChart): string {
  const rows = ["series,step,time,value"];
  for (const curve of chart.series) {
    curve.values.forEach((value, index) => {
      if (value === null) return;
      const time = new Date(Math.round((curve.times[index] as number) * 1000)).toISOString();
      rows.push([cell(curve.label), String(curve.steps[index]), time, String(value)].join(","));
    });
  }
  return `${rows.join("\r\n")}\r\n`;
}
