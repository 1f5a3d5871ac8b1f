// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { formatCount, formatDuration, formatLimit, renderLimit, renderMeta } from "../meta.js";

describe("formatting", () => {
  it("formats token counts", () => {
    expect(formatCount(950)).toBe("950");
    expect(formatCount(1234)).toBe("1.2k");
    expect(formatCount(45600)).toBe("46k");
    expect(formatCount(2_500_000)).toBe("2.5M");
    expect(formatCount(null)).toBe("–");
  });

  it("formats durations", () => {
    expect(formatDuration(0.0123)).toBe("12 ms");
    expect(formatDuration(3.456)).toBe("3.5 s");
    expect(formatDuration(42)).toBe("42 s");
    expect(formatDuration(125)).toBe("2 min 5 s");
    expect(formatDuration(null)).toBeNull();
  });
});

describe("a run's time limit", () => {
  it("says it in the largest whole unit (as nbagent/loop/deadline.py's describe_limit)", () => {
    expect(formatLimit(600)).toBe("10 min");
    expect(formatLimit(90)).toBe("90 s");
    expect(formatLimit(60)).toBe("1 min");
    expect(formatLimit(3600)).toBe("1 h");
    expect(formatLimit(5400)).toBe("1 h 30 min");
    expect(formatLimit(0.5)).toBe("0.5 s");
  });

  it("is a chip only when the run has a limit", () => {
    expect(renderLimit(600).textContent).toBe("stops after 10 min");
    expect(renderLimit(600).title).toContain("max_time");
    for (const none of [null, undefined, 0]) expect(renderLimit(none)).toBeNull();
  });
});

describe("renderMeta", () => {
  it("shows tokens and time as chips", () => {
    const el = renderMeta({ input_tokens: 1200, output_tokens: 80 }, 3.5);
    expect(el.querySelector(".nba-tokens").textContent).toBe("1.2k in · 80 out tokens");
    expect(el.querySelector(".nba-duration").textContent).toBe("3.5 s");
  });

  it("omits what is missing", () => {
    expect(renderMeta(null, 1).querySelector(".nba-tokens")).toBeNull();
    expect(renderMeta({ input_tokens: 0, output_tokens: 0 }, null)).toBeNull();
  });
});
