// The page's routes: the hash it reads and the hashes it writes agree, keys of any spelling included.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compareHash, parseRoute, runHash } from "../dashboard/route.js";

describe("the page's routes", () => {
  it("open the runs list on an empty hash, `#` or `#/`", () => {
    for (const hash of ["", "#", "#/"]) assert.deepEqual(parseRoute(hash), { view: "runs" }, hash);
  });

  it("read back the run and the runs they wrote, slashes, spaces and `&` included", () => {
    const key = "exp 1/a&b?c#d";
    assert.deepEqual(parseRoute(runHash(key)), { view: "run", key });
    assert.deepEqual(parseRoute(compareHash(new Set([key, "b"]))), { view: "compare", keys: [key, "b"] });
  });

  it("compare nothing before runs are picked, and show no view for an unknown hash", () => {
    assert.deepEqual(parseRoute("#/compare"), { view: "compare", keys: [] });
    assert.deepEqual(parseRoute("#/settings"), { view: "none" });
  });
});
