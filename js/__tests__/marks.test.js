// @vitest-environment jsdom
// Badges that say what happened (issue 33 item 2): stopped and timed out are no errors, a rejected step says so,
// nothing turns while a person is asked, and the code shows once.
import { beforeEach, describe, expect, it } from "vitest";
import { createImageUrls } from "../images.js";
import { RunView } from "../run.js";
import { STEP_MARK_LABELS, StepMark, stepMark } from "../status.js";
import { renderStep } from "../step.js";
import { LiveStep, withoutCode } from "../stream.js";
import { PNG, sampleRun, stubObjectUrls } from "./helpers.js";

beforeEach(() => stubObjectUrls());
const ctx = () => ({ images: { get: () => PNG, url: createImageUrls().url }, renderRunInto: () => {} });
const step = sampleRun().steps[1]; // an action step with an error

/** @param {object} fields */
const rendered = (fields) => renderStep({ ...step, ...fields }, ctx());
const chips = (/** @type {HTMLElement} */ el) => [...el.querySelectorAll(".nba-step-head .nba-mark")].map((c) => c.textContent);

describe("step marks", () => {
  it("a stopped step has one 'stopped' badge, not a red error, and its end is said as stopped", () => {
    const el = rendered({ error: "Stopped by the user.", stopped: true, mark: "stopped" });
    expect(chips(el)).toEqual(["stopped"]);
    expect(el.querySelector(".nba-chip-error")).toBeNull();
    expect(el.classList.contains("nba-step-error")).toBe(false);
    expect(el.classList.contains("nba-step-stopped")).toBe(true);
    expect(el.querySelector(".nba-error")).toBeNull();
    expect(el.querySelector(".nba-ended-stopped .nba-label").textContent).toBe("Stopped");
    expect(el.querySelector(".nba-ended-text").textContent).toBe("Stopped by the user.");
  });

  it("a step ended by the time limit says 'timed out' in its own colour class", () => {
    const el = rendered({ error: "Stopped: the run reached its time limit of 4 s (max_time).", stopped: true, mark: "timed_out" });
    expect(chips(el)).toEqual(["timed out"]);
    expect(el.querySelector(".nba-mark-timed_out")).not.toBeNull();
    expect(el.classList.contains("nba-step-timed_out")).toBe(true);
    expect(el.querySelector(".nba-error")).toBeNull();
    expect(el.querySelector(".nba-ended-timed_out .nba-label").textContent).toBe("Timed out");
  });

  it("a rejected step is marked 'rejected'; an error stays an error", () => {
    const rejected = rendered({ error: null, mark: "rejected", observations: "A person reviewed this code and rejected it." });
    expect(chips(rejected)).toEqual(["rejected"]);
    expect(rejected.classList.contains("nba-step-rejected")).toBe(true);
    const failed = rendered({ mark: "error" });
    expect(chips(failed)).toEqual(["error"]);
    expect(failed.querySelector(".nba-chip-error")).not.toBeNull();
    expect(failed.querySelector(".nba-error .nba-label").textContent).toBe("Error");
  });

  it("a step saved before steps had a mark falls back on stopped and error", () => {
    expect(stepMark({ stopped: true, error: "x" })).toBe(StepMark.STOPPED);
    expect(stepMark({ error: "x" })).toBe(StepMark.ERROR);
    expect(stepMark({ error: null })).toBeNull();
    expect(stepMark({ mark: "nonsense", error: null })).toBeNull();
    expect(Object.keys(STEP_MARK_LABELS)).toEqual(Object.values(StepMark));
  });
});

describe("the live step while a person is asked", () => {
  const CODE = "Thought: read it.\nCode:\n```py\nimport urllib.request\nurllib.request.urlopen('https://example.org')\n```";

  it("stops turning and shows the thought without the code, then turns again", () => {
    const live = new LiveStep();
    live.delta(2, CODE);
    const run = { status: "running", steps: [] };
    live.sync(run, "awaiting_approval");
    const spinner = /** @type {HTMLElement} */ (live.el.querySelector(".nba-spinner"));
    expect(spinner.hidden).toBe(true);
    expect(/** @type {HTMLElement} */ (live.el.querySelector(".nba-live-waiting")).hidden).toBe(false);
    const shown = [...live.el.querySelectorAll("pre")].filter((p) => !p.hidden).map((p) => p.textContent);
    expect(shown).toEqual(["Thought: read it."]); // the code shows once: in the review box
    live.sync(run, "running");
    expect(spinner.hidden).toBe(false);
    expect(/** @type {HTMLElement} */ (live.el.querySelector(".nba-streaming")).hidden).toBe(false);
  });

  it("in a whole run awaiting permission: no spinner anywhere and the code once", () => {
    const view = new RunView({ images: { get: () => PNG, url: createImageUrls().url } });
    view.live?.delta(1, CODE);
    view.update({ status: "awaiting_permission", agent_name: "a", steps: [{ kind: "task", task: "t", images: [] }] });
    const visible = (/** @type {string} */ sel) => [...view.el.querySelectorAll(sel)].filter((e) => !e.closest("[hidden]"));
    expect(visible(".nba-spinner")).toHaveLength(0);
    expect(visible("pre").filter((p) => p.textContent?.includes("urlopen"))).toHaveLength(0);
  });

  it("withoutCode drops closed and still-open blocks", () => {
    expect(withoutCode("T\n```py\na = 1\n```\nafter")).toBe("T\n\nafter");
    expect(withoutCode("T\nCode:\n```py\na = 1")).toBe("T");
    expect(withoutCode("T <code>x</code>")).toBe("T");
  });
});
