// Every element id of the page (index.html), in one place: the code names an element through
// `ID`, never by a string of its own, and a node test keeps this list and index.html alike.

export const ID = {
  navRuns: "nav-runs",
  navCompare: "nav-compare",
  serverNote: "server-note",
  runsView: "runs-view",
  filter: "filter",
  compareSelected: "compare-selected",
  configPicker: "config-picker",
  configColumns: "config-columns",
  runs: "runs",
  runsEmpty: "runs-empty",
  runsPage: "runs-page",
  runsPrevious: "runs-previous",
  runsNext: "runs-next",
  runView: "run-view",
  runTitle: "run-title",
  runStatus: "run-status",
  stop: "stop",
  progressBar: "progress-bar",
  progressText: "progress-text",
  runError: "run-error",
  runChain: "run-chain",
  smoothing: "smoothing",
  logScale: "log-scale",
  charts: "charts",
  phases: "phases",
  trialsPanel: "trials-panel",
  trials: "trials",
  provenance: "provenance",
  config: "config",
  compareView: "compare-view",
  compareNote: "compare-note",
  compareProblems: "compare-problems",
  compareMetric: "compare-metric",
  compareChart: "compare-chart",
  compareConfig: "compare-config",
} as const;

export type PageId = (typeof ID)[keyof typeof ID];

/** The page's element `id`, checked to be of the kind the code expects (a clear error, never a cast). */
export function required<T extends HTMLElement>(id: PageId, kind: { new (): T; prototype: T }): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  if (!(found instanceof kind))
    throw new Error(`the page's #${id} is a <${found.tagName.toLowerCase()}>, not ${kind.name}`);
  return found;
}

/** The page's element `id`, of any kind. */
export function byId(id: PageId): HTMLElement {
  return required(id, HTMLElement);
}
