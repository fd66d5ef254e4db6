import assert from "node:assert/strict";
import { AppError } from "../../../src/kernel/errors.js";
import type { WriteContext } from "../../../src/write-path/domain-events.js";

/** An admin key of no environment: may do anything a service allows. */
export const ADMIN: WriteContext = {
  actor: { type: "key", keyId: "key_admin", keyName: "admin", role: "admin" },
  requestId: null,
  mayConfigureProtected: true,
  boundTo: null,
};

/** Asserts that `promise` is refused with this status and code; answers the error. */
export async function refused(promise: Promise<unknown>, status: number, code: string): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    assert.equal(error.status, status, error.detail);
    assert.equal(error.code, code, error.detail);
    return error;
  }
  assert.fail(`expected ${status} ${code}, got an answer`);
}
