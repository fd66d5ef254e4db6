import type { Clock } from "@flagstaff/server/dist/src/clock.js";

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.parse("2026-11-22T10:00:00.000Z")) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
