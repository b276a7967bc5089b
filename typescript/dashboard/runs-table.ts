// The runs list: one row per run directory, the columns the user picked from the runs' config
// keys, a filter over exactly the text the rows show, and sorting by any column.
import { element } from "./dom.js";
import {
  configColumn,
  configNames,
  FIRST_ORDER,
  orderAfterClick,
  progressWidth,
  RUN_COLUMNS,
  type RunsColumn,
  type RunsOrder,
  shownRows,
  statusBadgeClass,
} from "./list-view.js";
import { checkedNames, type RunRow } from "./run-rows.js";

export type { RunRow };

const CHOSEN_KEY = "trainwire-config-columns";

/** A cell showing `shown`: with a badge (status) or a small bar (progress) where the column has one. */
function cell(column: RunsColumn, row: RunRow, shown: string): HTMLTableCellElement {
  if (column.id === "status") {
    const td = element("td");
    td.append(element("span", shown, statusBadgeClass(row.verdict?.status ?? row.status)));
    return td;
  }
  if (column.id === "progress") {
    const td = element("td");
    const bar = element("span", undefined, "mini");
    const fill = element("span");
    fill.style.width = progressWidth(row);
    bar.append(fill);
    td.append(bar, ` ${shown}`);
    return td;
  }
  return element("td", shown);
}

export class RunsTable {
  readonly selected = new Set<string>();
  #rows: RunRow[] = [];
  #order: RunsOrder = FIRST_ORDER;
  #chosen: string[] = checkedNames(localStorage.getItem(CHOSEN_KEY));

  constructor(
    private readonly table: HTMLTableElement,
    private readonly picker: HTMLElement,
    private readonly filter: HTMLInputElement,
    private readonly onOpen: (key: string) => void,
    private readonly onSelect: () => void,
  ) {
    filter.addEventListener("input", () => this.render());
  }

  update(rows: RunRow[]): void {
    this.#rows = rows;
    this.#renderPicker();
    this.render();
  }

  get rows(): readonly RunRow[] {
    return this.#rows;
  }

  render(): void {
    const columns = [...RUN_COLUMNS, ...this.#chosen.map(configColumn)];
    this.table.querySelector("thead")?.replaceWith(this.#head(columns));
    const body = element("tbody");
    for (const { row, cells } of shownRows(this.#rows, columns, this.filter.value, this.#order)) {
      const tr = element("tr");
      tr.dataset["key"] = row.key;
      tr.append(this.#pick(row.key));
      columns.forEach((column, index) => {
        const content = cells[index] ?? "";
        const td = cell(column, row, content);
        td.title = content;
        td.dataset["column"] = column.id;
        tr.append(td);
      });
      tr.addEventListener("click", () => this.onOpen(row.key));
      body.append(tr);
    }
    this.table.querySelector("tbody")?.replaceWith(body);
  }

  #head(columns: RunsColumn[]): HTMLTableSectionElement {
    const head = element("thead");
    const tr = element("tr");
    tr.append(element("th"));
    for (const column of columns) {
      const th = element("th", column.title);
      th.dataset["sort"] = column.id;
      th.classList.toggle("sorted", column.id === this.#order.column);
      th.classList.toggle("ascending", column.id === this.#order.column && this.#order.ascending);
      th.addEventListener("click", () => {
        this.#order = orderAfterClick(this.#order, column, this.#rows);
        this.render();
      });
      tr.append(th);
    }
    head.append(tr);
    return head;
  }

  #pick(key: string): HTMLTableCellElement {
    const pick = element("input");
    pick.type = "checkbox";
    pick.checked = this.selected.has(key);
    pick.addEventListener("click", (event) => event.stopPropagation());
    pick.addEventListener("change", () => {
      if (pick.checked) this.selected.add(key);
      else this.selected.delete(key);
      this.onSelect();
    });
    const td = element("td");
    td.append(pick);
    return td;
  }

  /** A checkbox per config key any run has; the ticked ones are columns (kept for the browser). */
  #renderPicker(): void {
    const names = configNames(this.#rows);
    const existing = [...this.picker.querySelectorAll<HTMLInputElement>("input")].map((input) => input.value);
    if (existing.join("\n") === names.join("\n")) return;
    this.picker.replaceChildren(
      ...names.map((name) => {
        const label = element("label");
        const box = element("input");
        box.type = "checkbox";
        box.value = name;
        box.checked = this.#chosen.includes(name);
        box.addEventListener("change", () => {
          this.#chosen = box.checked ? [...this.#chosen, name] : this.#chosen.filter((chosen) => chosen !== name);
          localStorage.setItem(CHOSEN_KEY, JSON.stringify(this.#chosen));
          this.render();
        });
        label.append(box, ` ${name}`);
        return label;
      }),
    );
    if (names.length === 0) this.picker.append(element("span", "no config keys in these runs"));
  }
}
