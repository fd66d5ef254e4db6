import assert from "node:assert/strict";
import { FlagstaffError } from "../src/index.js";

// Assertions the SDK's test files share.

/** Asserts a promise rejects with a FlagstaffError of this status and code, and answers it. */
export async function rejectsWith(promise: Promise<unknown>, status: number, code: string): Promise<FlagstaffError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FlagstaffError, `expected a FlagstaffError, got ${String(error)}`);
    assert.equal(error.code, code, `expected code ${code}, got ${error.code}: ${error.message}`);
    assert.equal(error.status, status);
    return error;
  }
  assert.fail(`expected ${status} ${code}, but the call succeeded`);
}
