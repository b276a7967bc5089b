// The page's element ids live in one typed module; it and index.html name the same ids, and no
// other module of the page looks an element up by a string of its own.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ID } from "../dashboard/page-ids.js";
import { PACKAGE_DIR } from "./helpers.js";

const DASHBOARD_DIR = path.join(PACKAGE_DIR, "dashboard");

function htmlIds(): string[] {
  const html = readFileSync(path.join(DASHBOARD_DIR, "index.html"), "utf8");
  return [...html.matchAll(/\sid="([^"]*)"/g)].map((match) => match[1] ?? "");
}

describe("the page's ids", () => {
  it("are the ids index.html declares, each once", () => {
    const declared = htmlIds();
    assert.deepEqual([...new Set(declared)].sort(), [...declared].sort(), "an id appears twice in index.html");
    assert.deepEqual(Object.values(ID).sort(), declared.sort());
  });

  it("have one name each in the module", () => {
    const values = Object.values(ID);
    assert.equal(new Set(values).size, values.length);
  });

  it("are looked up only through the module (the `trainwire plot` page's own script aside)", () => {
    const lookups = /getElementById\(|querySelector(All)?\(\s*["'`]#/;
    const offenders = readdirSync(DASHBOARD_DIR)
      .filter((file) => file.endsWith(".ts") && file !== "page-ids.ts" && file !== "plot.ts")
      .filter((file) => lookups.test(readFileSync(path.join(DASHBOARD_DIR, file), "utf8")));
    assert.deepEqual(offenders, []);
  });
});
