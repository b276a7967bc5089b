// The runs list's notes, its rows' cells, the query of a page and its pager, and the server
// config as the page takes it: no DOM, no server (the server's filter and order are tested in
// python/tests/serve/test_runs_pages.py).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  configColumn,
  configRefusedNote,
  FIRST_ORDER,
  listView,
  NO_TOKEN_NOTE,
  orderAfterClick,
  PAGE_ROWS,
  pageOffset,
  pagerView,
  progressWidth,
  RUN_COLUMNS,
  type RunsColumn,
  runsUrl,
  shownRows,
  statusBadgeClass,
} from "../dashboard/list-view.js";
import { checkedPage, checkedRow, type RunRow } from "../dashboard/run-rows.js";
import { checkedConfig, UNKNOWN_CONFIG } from "../dashboard/server-config.js";

const writable = { version: "0.1.0", read_only: false };

describe("the runs list's notes", () => {
  it("name the server's version, and read-only when it is", () => {
    const list = { reached: true, status: 200, list: true } as const;
    assert.deepEqual(listView(list, writable, 3), { serverNote: "trainwire 0.1.0", emptyHidden: true });
    assert.equal(listView(list, { version: "0.1.0", read_only: true }, 3).serverNote, "trainwire 0.1.0 · read-only");
  });

  it("show the empty-list line only when no row is shown", () => {
    assert.equal(listView({ reached: true, status: 200, list: true }, writable, 0).emptyHidden, false);
    assert.equal(listView({ reached: false }, writable, 2).emptyHidden, true);
  });

  it("say why the list is not there: no token, not a list, no server", () => {
    assert.equal(listView({ reached: true, status: 403, list: false }, writable, 0).serverNote, NO_TOKEN_NOTE);
    assert.equal(
      listView({ reached: true, status: 200, list: false }, writable, 0).serverNote,
      "the server's runs list is not a page of runs; retrying",
    );
    assert.equal(listView({ reached: false }, writable, 0).serverNote, "server unreachable; retrying");
    assert.equal(configRefusedNote(403), NO_TOKEN_NOTE);
    assert.equal(configRefusedNote(500), "the server answered 500");
  });
});

describe("the server config", () => {
  it("is read-only unless the server says plainly it is not", () => {
    assert.deepEqual(UNKNOWN_CONFIG, { version: "", read_only: true });
    assert.equal(checkedConfig({ read_only: false }).read_only, false);
    for (const answer of [undefined, null, [], "x", {}, { read_only: "false" }, { read_only: 0 }])
      assert.equal(checkedConfig(answer).read_only, true, JSON.stringify(answer));
  });

  it("keeps a version only when it is text, with control characters escaped", () => {
    assert.equal(checkedConfig({ version: 3 }).version, "");
    assert.equal(checkedConfig({ version: "1\u202e" }).version, "1\\u202e");
  });
});

/** A row as the page checks it from the server's list (`key` added). */
function row(fields: Record<string, unknown>): RunRow {
  const checked = checkedRow({ key: "run", ...fields });
  assert.ok(checked);
  return checked;
}

/** What each fixed column shows for `fields`, by column id. */
function cells(fields: Record<string, unknown>): Record<string, string> {
  const [shown] = shownRows([row(fields)], RUN_COLUMNS);
  assert.ok(shown);
  return Object.fromEntries(RUN_COLUMNS.map((column, index) => [column.id, shown.cells[index] ?? ""]));
}

function column(id: string): RunsColumn {
  const found = RUN_COLUMNS.find((column) => column.id === id);
  assert.ok(found, id);
  return found;
}

describe("a row of the runs list", () => {
  it("shows the status and duration of the server's verdict, a dead run's never growing", () => {
    const verdict = {
      verdict_version: 1,
      run_id: "r1",
      status: "stale",
      liveness: "gone",
      judged_at: "2026-12-07T10:05:00.000000Z",
      exit_code: null,
      reason: null,
      step: 30,
      started_at: "2026-12-07T10:00:00.000000Z",
      ended_at: "2026-12-07T10:00:05.200000Z",
      ended_by: "last_line",
      duration_s: 5.2,
      best: {},
      checkpoint: null,
      params: { layers: 2 },
      completeness: null,
    };
    const shown = cells({ run_id: "r1", status: "stale", duration_s: 5.2, verdict });
    assert.equal(shown["status"], "stale (process gone)");
    assert.equal(shown["duration_s"], "5.2s");
    assert.equal(row({ status: "running", verdict: { ...verdict, status: "bogus" } }).status, "running"); // not a verdict: the plain status
  });
  it("writes the characters that reorder or hide text as escapes, in every cell", () => {
    const shown = cells({
      key: "exp\u202egnp.exe",
      run_id: "r\u200b1",
      status: "running\u2066",
      git_sha: "\u202eabc",
      notes: "1\u0007",
    });
    assert.equal(shown.key, "exp\\u202egnp.exe");
    assert.equal(shown.run_id, "r\\u200b1");
    assert.equal(shown.status, "running\\u2066");
    assert.equal(shown.git_sha, "\\u202eabc");
    assert.equal(shown.notes, "1\\x07");
    const [configured] = shownRows([row({ config: { model: "\u202emodel" } })], [configColumn("model")]);
    assert.deepEqual(configured?.cells, ["\\u202emodel"]);
  });

  it("shows its status as a badge, the status its class only when it is a plain word", () => {
    for (const status of ["running", "succeeded", "failed", "interrupted", "reverted", "stale"]) {
      assert.equal(cells({ status }).status, status);
      assert.equal(statusBadgeClass(status), `badge ${status}`);
    }
    assert.equal(cells({ status: "awaiting_approval" }).status, "awaiting approval");
    assert.equal(statusBadgeClass("awaiting_approval"), "badge awaiting_approval");
    for (const status of ["running hidden", "<b>", "Running", "x".repeat(33), ""])
      assert.equal(statusBadgeClass(status), "badge", status);
    assert.equal(cells({ status: 123 }).status, "–");
    assert.equal(statusBadgeClass(row({ status: 123 }).status), "badge");
  });

  it("shows – for every value it lacks or had of the wrong type, and an empty name, tags and notes", () => {
    const blank = {
      key: "run",
      run_id: "",
      name: "",
      tags: "",
      status: "–",
      progress: "–",
      last_loss: "–",
      best_loss: "–",
      started_at: "–",
      duration_s: "–",
      git_sha: "–",
      notes: "",
    };
    assert.deepEqual(cells({}), blank);
    assert.deepEqual(
      cells({
        run_id: 1,
        name: 2,
        tags: "fp16",
        status: [],
        step: "5",
        total_steps: {},
        last_loss: "0.5",
        best_loss: null,
        started_at: "yesterday",
        duration_s: "90",
        git_sha: 12345,
        notes: 5,
      }),
      blank,
    );
    assert.equal(progressWidth(row({})), "0%");
  });

  it("shows its values: name and tags escaped, losses to four digits, the duration, a short git sha", () => {
    const shown = cells({
      run_id: "r-1",
      name: "beta\u202e sweep",
      tags: ["baseline", "fp16", 7],
      last_loss: 0.123456,
      best_loss: 2,
      duration_s: 3725,
      git_sha: "0123456789abcdef",
      notes: "resumed after preemption",
    });
    assert.equal(shown["run_id"], "r-1");
    assert.equal(shown["name"], "beta\\u202e sweep");
    assert.equal(shown["tags"], "baseline, fp16");
    assert.equal(shown["last_loss"], "0.1235");
    assert.equal(shown["best_loss"], "2");
    assert.equal(shown["duration_s"], "1:02:05");
    assert.equal(shown["git_sha"], "0123456789");
    assert.equal(shown["notes"], "resumed after preemption");
    // in UTC to the second, whatever the browser's zone: the text the server's filter matches
    assert.equal(cells({ started_at: "2026-12-04T10:00:00.75Z" }).started_at, "2026-12-04 10:00:00");
    assert.equal(cells({ started_at: "2026-12-04T12:00:00+02:00" }).started_at, "2026-12-04 10:00:00");
  });

  it("shows progress as step/total with its bar, capped at the total", () => {
    assert.equal(cells({ step: 5, total_steps: 20 }).progress, "5/20");
    assert.equal(progressWidth(row({ step: 5, total_steps: 20 })), "25%");
    assert.equal(progressWidth(row({ step: 30, total_steps: 20 })), "100%");
    assert.equal(cells({ step: 5, total_steps: 0 }).progress, "5");
    assert.equal(progressWidth(row({ step: 5, total_steps: 0 })), "0%");
    assert.equal(cells({ total_steps: 20 }).progress, "–/20");
    assert.equal(progressWidth(row({ total_steps: 20 })), "0%");
  });

  it("of a stale run shows stale and the duration it had at its last line", () => {
    const stale = { status: "stale", step: 1, total_steps: 100, duration_s: 90 };
    assert.deepEqual([cells(stale).status, cells(stale).progress, cells(stale).duration_s], ["stale", "1/100", "1:30"]);
    assert.equal(statusBadgeClass(row(stale).status), "badge stale");
    assert.equal(progressWidth(row(stale)), "1%");
  });

  it("of a search (trials, no steps of its own) shows no progress but its best loss", () => {
    const search = { status: "running", best_loss: 0.25, last_loss: null };
    assert.deepEqual([cells(search).progress, cells(search).best_loss, cells(search).last_loss], ["–", "0.2500", "–"]);
    assert.equal(progressWidth(row(search)), "0%");
  });
});

describe("the runs list's order", () => {
  const rows = [
    row({ key: "old", started_at: "2026-12-01T10:00:00Z", best_loss: 0.5 }),
    row({ key: "none" }),
    row({ key: "new", started_at: "2026-12-03T10:00:00Z", best_loss: 0.1 }),
  ];

  it("turns round on the sorted column; another starts A to Z for text, largest first otherwise", () => {
    assert.deepEqual(orderAfterClick(FIRST_ORDER, column("started_at"), rows), {
      column: "started_at",
      ascending: true,
    });
    assert.deepEqual(orderAfterClick(FIRST_ORDER, column("key"), rows), { column: "key", ascending: true });
    assert.deepEqual(orderAfterClick(FIRST_ORDER, column("best_loss"), rows), {
      column: "best_loss",
      ascending: false,
    });
    assert.deepEqual(orderAfterClick(FIRST_ORDER, column("key"), []), { column: "key", ascending: false });
  });
});

describe("the runs list's config columns", () => {
  it("show a value as the run was given it, – without one", () => {
    const rows = [
      row({ key: "a", config: { v: "wide-net" } }),
      row({ key: "b", config: { v: [1, 2] } }),
      row({ key: "c", config: { v: 10 } }),
      row({ key: "d", config: { v: 9 } }),
      row({ key: "e", config: {} }),
    ];
    const picked = configColumn("v");
    assert.deepEqual(
      rows.map((found) => picked.shown(found)),
      ["wide-net", "[1,2]", "10", "9", "–"],
    );
    assert.equal(configColumn("toString").shown(row({ config: {} })), "–");
  });
});

describe("a page of the runs list", () => {
  const page = (fields: Record<string, unknown>) => checkedPage({ rows: [], total: 0, offset: 0, ...fields });

  it("is asked of the server with its filter, order, config columns and start", () => {
    const url = runsUrl({
      filter: "fp16 & more",
      order: { column: "config:model.name", ascending: true },
      config: ["model.name", "lr"],
      offset: 400,
    });
    const params = new URLSearchParams(url.slice(url.indexOf("?") + 1));
    assert.ok(url.startsWith("api/runs?"));
    assert.equal(params.get("filter"), "fp16 & more");
    assert.equal(params.get("sort"), "config:model.name");
    assert.equal(params.get("order"), "asc");
    assert.deepEqual(params.getAll("config"), ["model.name", "lr"]);
    assert.equal(params.get("offset"), "400");
    assert.equal(params.get("limit"), String(PAGE_ROWS));
    const blank = new URLSearchParams(runsUrl({ filter: "  ", order: FIRST_ORDER, config: [], offset: -3 }).slice(9));
    assert.equal(blank.get("filter"), null);
    assert.equal(blank.get("order"), "desc");
    assert.equal(blank.get("offset"), "0");
  });

  it("is checked: a page must be an object with a list of rows; other fields of the wrong type get a default", () => {
    for (const answer of [undefined, null, [], "x", {}, { rows: {} }]) assert.equal(checkedPage(answer), undefined);
    const checked = checkedPage({
      rows: [{ key: "a" }],
      total: "9",
      offset: -1,
      scanning: "yes",
      config_keys: [1, "lr"],
    });
    assert.deepEqual(checked && { ...checked, rows: checked.rows.map((found) => found.key) }, {
      rows: ["a"],
      total: 1,
      offset: 0,
      scanning: false,
      configKeys: ["lr"],
    });
    assert.equal(page({ scanning: true })?.scanning, true);
  });

  it("keeps each run of a directory once, and shows a directory's runs under its first", () => {
    const checked = checkedPage({
      rows: [
        { key: "out", run_id: "first" },
        { key: "out", run_id: "second" },
        { key: "out", run_id: "second" },
        { key: "other", run_id: "x" },
      ],
    });
    assert.ok(checked);
    assert.deepEqual(
      shownRows(checked.rows, RUN_COLUMNS).map((shown) => [shown.row.run_id, shown.sameFolder]),
      [
        ["first", false],
        ["second", true],
        ["x", false],
      ],
    );
  });

  it("says which runs it shows of how many, and whether the server is still reading them", () => {
    const rows = [{ key: "a" }, { key: "b" }];
    assert.deepEqual(pagerView(page({ rows, total: 202, offset: 200 })), {
      text: "runs 201–202 of 202",
      previousDisabled: false,
      nextDisabled: true,
    });
    const first = page({ rows, total: 450, offset: 0, scanning: true });
    assert.deepEqual(pagerView(first), {
      text: "runs 1–2 of 450 · still reading the runs",
      previousDisabled: true,
      nextDisabled: false,
    });
    assert.equal(pagerView(page({ total: 0 })).text, "runs none of 0");
    assert.equal(pageOffset(first, 1), PAGE_ROWS);
    assert.equal(pageOffset(first, -1), 0);
    assert.equal(pageOffset(page({ rows, total: 450, offset: 400 }), 1), 400); // the last page stays
  });
});
