// A chart's series as CSV: one row per point (series, step, time, value), for a spreadsheet.
import type { DrawnChart } from "./chart.js";

/** What makes a spreadsheet read a cell as a formula when it starts it (OWASP CSV injection, ASVS 1.2.10). */
const FORMULA_START = /^[=+\-@\t\r\n\0]/;

/**
 * A text cell (a series label, from the stream): prefixed with `'` when it starts like a formula,
 * so a spreadsheet shows it as text, and always quoted (RFC 4180), so that a spreadsheet
 * splitting on `;` or a tab does not start a new cell, formula and all, inside it.
 */
export function textCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return `"${safe.replaceAll('"', '""')}"`;
}

/** The kept points of every curve of `chart`; a restart's break (no value) is left out. Times in ISO 8601, UTC. */
export function chartCsv(chart: DrawnChart): string {
  const rows = ["series,step,time,value"];
  for (const curve of chart.series) {
    curve.values.forEach((value, index) => {
      if (value === null) return;
      const time = new Date(Math.round((curve.times[index] as number) * 1000)).toISOString();
      rows.push([textCell(curve.label), String(curve.steps[index]), time, String(value)].join(","));
    });
  }
  return `${rows.join("\r\n")}\r\n`;
}
