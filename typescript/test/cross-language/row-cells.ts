// For each request given as JSON on stdin ({row, config}: a row of `/api/runs` and config keys),
// print the texts of its cells as the page shows them (`RUN_COLUMNS`, then each config column),
// one JSON list per line: the server filters on the same texts (trainwire/serve/row_text.py).
import { configColumn, RUN_COLUMNS } from "../../dashboard/list-view.js";
import { checkedRow } from "../../dashboard/run-rows.js";
import { answer, requests } from "./requests.js";

for (const { row, config } of requests<{ row: unknown; config: string[] }>()) {
  const checked = checkedRow(row);
  if (checked === undefined) throw new TypeError("a row without a key");
  answer([...RUN_COLUMNS, ...config.map(configColumn)].map((column) => column.shown(checked)));
}
