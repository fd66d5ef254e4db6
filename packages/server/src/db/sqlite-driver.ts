import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

const require = createRequire(import.meta.url);
const major = Number(process.versions.node.split(".")[0]);

/**
 * The better-sqlite3 constructor for this Node.js. From Node.js 22 on it is better-sqlite3 13, built on
 * Node-API (installed under the alias `better-sqlite3-napi`): version 12 subclasses node::ObjectWrap,
 * whose destructor aborts the process on Node.js 24.19 and later ("Assertion failed: (env) != nullptr"
 * when a statement is garbage-collected). On Node.js 20 and 21 it is better-sqlite3 12, because 13 needs
 * Node.js 22. When Node.js 20 support ends, depend on better-sqlite3 13 alone and delete this module.
 */
export const SQLite: typeof BetterSqlite3 = require(major >= 22 ? "better-sqlite3-napi" : "better-sqlite3");
export type SQLiteDatabase = BetterSqlite3.Database;
