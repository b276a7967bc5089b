// The runs list: one row per run directory, the columns the user picked from the runs' config
// keys, a filter over exactly the text the rows show, and sorting by any column.
import { formatDuration } from "../src/humanize.js";
import { printable } from "../src/printable.js";
import { configText, element, text } from "./dom.js";
import { checkedNames, type RunRow, STATUS_WORD } from "./run-rows.js";

export type { RunRow };

type Value = string | number | null;

interface Column {
  id: string;
  title: string;
  /** What the cell shows, and what the filter matches. */
  shown: (row: RunRow) => string;
  /** What the column sorts by. */
  sorted: (row: RunRow) => Value;
  cell?: (row: RunRow, shown: string) => HTMLTableCellElement;
}

const CHOSEN_KEY = "trainwire-config-columns";

function progressOf(row: RunRow): number | null {
  return row.step !== null && row.total_steps ? Math.min(row.step / row.total_steps, 1) : null;
}

/** The run's tags as the cell shows them (and the filter matches them): `baseline, fp16`. */
function tagsText(row: RunRow): string {
  return row.tags.map((tag) => printable(tag)).join(", ");
}

function duration(seconds: number | null): string {
  return seconds === null || !Number.isFinite(seconds) ? "–" : formatDuration(seconds);
}

const FIXED: Column[] = [
  { id: "key", title: "folder", shown: (row) => row.key, sorted: (row) => row.key },
  { id: "run_id", title: "run", shown: (row) => row.run_id, sorted: (row) => row.run_id },
  { id: "name", title: "name", shown: (row) => printable(row.name ?? ""), sorted: (row) => row.name ?? null },
  { id: "tags", title: "tags", shown: tagsText, sorted: (row) => tagsText(row) || null },
  {
    id: "status",
    title: "status",
    shown: (row) => (row.status ?? "–").replace("_", " "),
    sorted: (row) => row.status,
    cell: (row, shown) => {
      const td = element("td");
      td.append(element("span", shown, STATUS_WORD.test(row.status ?? "") ? `badge ${row.status}` : "badge"));
      return td;
    },
  },
  {
    id: "progress",
    title: "progress",
    shown: (row) => `${text(row.step)}${row.total_steps ? `/${row.total_steps}` : ""}`,
    sorted: progressOf,
    cell: (row, shown) => {
      const td = element("td");
      const bar = element("span", undefined, "mini");
      const fill = element("span");
      fill.style.width = `${Math.round((progressOf(row) ?? 0) * 100)}%`;
      bar.append(fill);
      td.append(bar, ` ${shown}`);
      return td;
    },
  },
  { id: "last_loss", title: "last loss", shown: (row) => text(row.last_loss), sorted: (row) => row.last_loss },
  { id: "best_loss", title: "best loss", shown: (row) => text(row.best_loss), sorted: (row) => row.best_loss },
  {
    id: "started_at",
    title: "started",
    shown: (row) => (row.started_at ? new Date(row.started_at).toLocaleString() : "–"),
    sorted: (row) => row.started_at,
  },
  { id: "duration_s", title: "duration", shown: (row) => duration(row.duration_s), sorted: (row) => row.duration_s },
  { id: "git_sha", title: "git sha", shown: (row) => (row.git_sha ?? "–").slice(0, 10), sorted: (row) => row.git_sha },
  { id: "notes", title: "notes", shown: (row) => row.notes ?? "", sorted: (row) => row.notes },
];

function configColumn(name: string): Column {
  const value = (row: RunRow): unknown => row.config.get(name);
  return {
    id: `config:${name}`,
    title: name,
    shown: (row) => configText(value(row)),
    sorted: (row) => {
      const found = value(row);
      return typeof found === "number" || typeof found === "string" ? found : found == null ? null : String(found);
    },
  };
}

export class RunsTable {
  readonly selected = new Set<string>();
  #rows: RunRow[] = [];
  #sortKey = "started_at";
  #ascending = false;
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
    const columns = [...FIXED, ...this.#chosen.map(configColumn)];
    const words = this.filter.value.trim().toLowerCase();
    const shown = this.#rows
      .map((row) => ({ row, cells: columns.map((column) => column.shown(row)) }))
      .filter(({ cells }) => !words || cells.some((cell) => cell.toLowerCase().includes(words)));
    const sortBy = columns.find((column) => column.id === this.#sortKey) ?? FIXED[0];
    shown.sort((a, b) => compare(sortBy?.sorted(a.row) ?? null, sortBy?.sorted(b.row) ?? null, this.#ascending));
    this.table.querySelector("thead")?.replaceWith(this.#head(columns));
    const body = element("tbody");
    for (const { row, cells } of shown) {
      const tr = element("tr");
      tr.dataset["key"] = row.key;
      tr.append(this.#pick(row.key));
      columns.forEach((column, index) => {
        const content = cells[index] ?? "";
        const td = column.cell?.(row, content) ?? element("td", content);
        td.title = content;
        td.dataset["column"] = column.id;
        tr.append(td);
      });
      tr.addEventListener("click", () => this.onOpen(row.key));
      body.append(tr);
    }
    this.table.querySelector("tbody")?.replaceWith(body);
  }

  #head(columns: Column[]): HTMLTableSectionElement {
    const head = element("thead");
    const tr = element("tr");
    tr.append(element("th"));
    for (const column of columns) {
      const th = element("th", column.title);
      th.dataset["sort"] = column.id;
      th.classList.toggle("sorted", column.id === this.#sortKey);
      th.classList.toggle("ascending", column.id === this.#sortKey && this.#ascending);
      th.addEventListener("click", () => {
        const first = this.#rows[0];
        this.#ascending =
          column.id === this.#sortKey
            ? !this.#ascending
            : first !== undefined && typeof column.sorted(first) === "string";
        this.#sortKey = column.id;
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
    const names = [...new Set(this.#rows.flatMap((row) => [...row.config.keys()]))].sort();
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

function compare(x: Value, y: Value, ascending: boolean): number {
  if (x === y) return 0;
  if (x === null) return 1;
  if (y === null) return -1;
  return (x < y ? -1 : 1) * (ascending ? 1 : -1);
}
