// The runs list: one row per run, a directory's runs together under it, the columns the user
// picked from the runs' config keys, a filter over exactly the text the rows show, sorting by
// any column and a page at a time: the server filters, sorts and pages (`runsUrl`), this table
// asks again whenever the filter, the order, the columns or the page change.
import { element } from "./dom.js";
import {
  configColumn,
  FIRST_ORDER,
  orderAfterClick,
  pageOffset,
  pagerView,
  progressWidth,
  RUN_COLUMNS,
  type RunsColumn,
  type RunsOrder,
  runsUrl,
  shownRows,
  statusBadgeClass,
} from "./list-view.js";
import { checkedNames, type RunRow, type RunsPage } from "./run-rows.js";

export type { RunRow };

const CHOSEN_KEY = "trainwire-config-columns";
/** How long typing rests before the filter is asked of the server. */
const FILTER_REST_MS = 150;

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

/** The elements of the runs list. */
export interface RunsTableElements {
  table: HTMLTableElement;
  picker: HTMLElement;
  filter: HTMLInputElement;
  pager: { text: HTMLElement; previous: HTMLButtonElement; next: HTMLButtonElement };
}

export class RunsTable {
  readonly selected = new Set<string>();
  #page: RunsPage | undefined;
  #order: RunsOrder = FIRST_ORDER;
  #offset = 0;
  #chosen: string[] = checkedNames(localStorage.getItem(CHOSEN_KEY));
  #typing: ReturnType<typeof setTimeout> | undefined;
  private readonly table: HTMLTableElement;
  private readonly picker: HTMLElement;
  private readonly filter: HTMLInputElement;

  constructor(
    private readonly elements: RunsTableElements,
    private readonly onOpen: (key: string) => void,
    private readonly onSelect: () => void,
    /** Called when the page shown must be asked for again (filter, order, columns or page changed). */
    private readonly onQuery: () => void,
  ) {
    this.table = elements.table;
    this.picker = elements.picker;
    this.filter = elements.filter;
    this.filter.addEventListener("input", () => {
      clearTimeout(this.#typing);
      this.#typing = setTimeout(() => this.#ask(0), FILTER_REST_MS);
    });
    elements.pager.previous.addEventListener("click", () => this.#ask(pageOffset(this.#page, -1)));
    elements.pager.next.addEventListener("click", () => this.#ask(pageOffset(this.#page, 1)));
  }

  /** The URL of the page this table shows now. */
  url(): string {
    return runsUrl({ filter: this.filter.value, order: this.#order, config: this.#chosen, offset: this.#offset });
  }

  update(page: RunsPage): void {
    this.#page = page;
    this.#renderPicker();
    this.render();
  }

  get rows(): readonly RunRow[] {
    return this.#page?.rows ?? [];
  }

  #ask(offset: number): void {
    this.#offset = offset;
    this.onQuery();
  }

  render(): void {
    const columns = [...RUN_COLUMNS, ...this.#chosen.map(configColumn)];
    this.table.querySelector("thead")?.replaceWith(this.#head(columns));
    const body = element("tbody");
    for (const { row, cells, sameFolder } of shownRows(this.rows, columns)) {
      const tr = element("tr");
      tr.dataset["key"] = row.key;
      tr.classList.toggle("same-folder", sameFolder);
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
    const pager = pagerView(this.#page);
    this.elements.pager.text.textContent = pager.text;
    this.elements.pager.previous.disabled = pager.previousDisabled;
    this.elements.pager.next.disabled = pager.nextDisabled;
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
        this.#order = orderAfterClick(this.#order, column, this.rows);
        this.render();
        this.#ask(0);
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
    const names = this.#page?.configKeys ?? [];
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
          this.#ask(this.#offset);
        });
        label.append(box, ` ${name}`);
        return label;
      }),
    );
    if (names.length === 0) this.picker.append(element("span", "no config keys in these runs"));
  }
}
