import { describe, expect, it } from "vitest";
import { LIVE_STATUSES, RunStatus, STATUSES, STATUS_LABELS, isRunStatus } from "../status.js";

// tests/views/test_parity.py checks these values against nbagent/record/status.py.
describe("status vocabulary", () => {
  it("lists every status once, in the order of RunStatus", () => {
    expect(STATUSES).toEqual([
      "idle", "running", "paused", "awaiting_approval", "awaiting_permission", "stopped", "done", "error", "max_steps", "no_answer", "timed_out", "stuck",
    ]);
    expect(STATUSES).toEqual(Object.values(RunStatus));
    expect(new Set(STATUSES).size).toBe(STATUSES.length);
  });

  it("names the values like Python's enum", () => {
    expect(RunStatus.AWAITING_APPROVAL).toBe("awaiting_approval");
    expect(Object.keys(RunStatus)).toEqual([
      "IDLE", "RUNNING", "PAUSED", "AWAITING_APPROVAL", "AWAITING_PERMISSION", "STOPPED", "DONE", "ERROR", "MAX_STEPS", "NO_ANSWER", "TIMED_OUT", "STUCK",
    ]);
  });

  it("is frozen", () => {
    expect(Object.isFrozen(RunStatus)).toBe(true);
    expect(Object.isFrozen(STATUSES)).toBe(true);
    expect(Object.isFrozen(STATUS_LABELS)).toBe(true);
  });

  it("has the live statuses: a run under way, paused, awaiting approval or awaiting permission", () => {
    expect([...LIVE_STATUSES].sort()).toEqual(["awaiting_approval", "awaiting_permission", "paused", "running"]);
    for (const status of LIVE_STATUSES) expect(STATUSES).toContain(status);
  });

  it("has a label for every status, and words for awaiting approval", () => {
    expect(Object.keys(STATUS_LABELS).sort()).toEqual([...STATUSES].sort());
    expect(STATUS_LABELS.awaiting_approval).toBe("awaiting approval");
    expect(STATUS_LABELS.awaiting_permission).toBe("awaiting permission");
    for (const status of STATUSES) expect(STATUS_LABELS[status]).toMatch(/^[a-z ]+$/);
  });

  it("tells statuses from other values", () => {
    for (const status of STATUSES) expect(isRunStatus(status)).toBe(true);
    for (const other of ["weird", "", "constructor", "toString", "IDLE", null, undefined, 1, {}]) {
      expect(isRunStatus(other)).toBe(false);
    }
  });
});
