// Migrations on a real file: applied once each, in order, and never half.
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Migration } from "./migrate.ts";
import { openDatabase } from "./open-database.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "open-database-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const createNotes: Migration = {
  name: "notes",
  up: (db) => db.exec("CREATE TABLE notes (text TEXT) STRICT"),
};
const addAuthor: Migration = {
  name: "author",
  up: (db) => db.exec("ALTER TABLE notes ADD COLUMN author TEXT"),
};

const tables = (file: string, migrations: Migration[]) => {
  const db = openDatabase({ file, migrations });
  try {
    return {
      version: db.pragma("user_version", { simple: true }),
      columns: (db.prepare("SELECT name FROM pragma_table_info('notes')").all() as { name: string }[]).map(
        (row) => row.name,
      ),
    };
  } finally {
    db.close();
  }
};

describe("openDatabase", () => {
  it("applies only the migrations a database has not seen", () => {
    const file = path.join(dir, "test.db");
    expect(tables(file, [createNotes])).toEqual({ version: 1, columns: ["text"] });
    expect(tables(file, [createNotes, addAuthor])).toEqual({ version: 2, columns: ["text", "author"] });
    expect(tables(file, [createNotes, addAuthor])).toEqual({ version: 2, columns: ["text", "author"] });
  });

  it("rolls a failing migration back whole and leaves the version where it was", () => {
    const file = path.join(dir, "test.db");
    const halfDone: Migration = {
      name: "half done",
      up: (db) => {
        db.exec("ALTER TABLE notes ADD COLUMN author TEXT");
        db.exec("THIS IS NOT SQL");
      },
    };
    expect(() => openDatabase({ file, migrations: [createNotes, halfDone] })).toThrow();
    expect(tables(file, [createNotes])).toEqual({ version: 1, columns: ["text"] });
  });

  it("creates a database, with its write-ahead log, that only its owner can read", () => {
    const file = path.join(dir, "private.db");
    const db = openDatabase({ file, migrations: [createNotes] });
    try {
      db.prepare("INSERT INTO notes (text) VALUES ('a grade')").run();
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    } finally {
      db.close();
    }
  });
});
