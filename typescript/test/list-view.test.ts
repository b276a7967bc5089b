// The runs list's notes and the server config as the page takes it: no DOM, no server.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configRefusedNote, listView, NO_TOKEN_NOTE } from "../dashboard/list-view.js";
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
      "the server's runs list is not a list; retrying",
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
