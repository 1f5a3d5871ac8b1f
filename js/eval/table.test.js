// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { fakeModel } from "../__tests__/helpers.js";
import widget, {
  MAX_ROWS,
  filterRows,
  formatCount,
  formatDuration,
  formatScore,
  isFailing,
  noAnswer,
  renderComparisons,
  renderProgress,
  sortRows,
  stateText,
} from "./table.js";

const row = (over) => ({
  key: "a|t1|0",
  agent: "a",
  id: "t1",
  epoch: 0,
  task: "What is 2+2?",
  expected: "4",
  answer: "4",
  state: "success",
  steps: 1,
  tokens: 120,
  duration_s: 0.5,
  error: null,
  scores: { exact_match: 1 },
  scorer_errors: null,
  ...over,
});

const progress = (over) => ({
  status: "running",
  done: 1,
  total: 4,
  errors: 0,
  cancelled: 0,
  input_tokens: 100,
  output_tokens: 20,
  elapsed_s: 3,
  remaining_s: 9,
  engine: "2 threads",
  scorers: ["exact_match"],
  agents: [{ agent: "a", done: 1, errors: 0, scores: { exact_match: 1 } }],
  ...over,
});

describe("formatting", () => {
  it("formats durations, scores and counts", () => {
    expect(formatDuration(75)).toBe("1:15");
    expect(formatDuration(3725)).toBe("1:02:05");
    expect(formatDuration(null)).toBe("–");
    expect(formatScore(null)).toBe("–");
    expect(formatScore(1)).toBe("1");
    expect(formatScore(0.456)).toBe("0.46");
    expect(formatCount(12345)).toBe("12k");
    expect(formatCount(1500)).toBe("1.5k");
  });
});

describe("rows", () => {
  const rows = [
    row(),
    row({ key: "a|t2|0", id: "t2", answer: "5", scores: { exact_match: 0 } }),
    row({ key: "b|t1|0", agent: "b", state: "error", error: "ModelError: boom", scores: { exact_match: null } }),
  ];

  it("marks failing samples: a low score, an error, a scorer error", () => {
    expect(rows.map((r) => isFailing(r, ["exact_match"]))).toEqual([false, true, true]);
    expect(isFailing(row({ scorer_errors: "x: ValueError" }), ["exact_match"])).toBe(true);
  });

  it("a run without a final answer is failing and its state says so, even with a closing reply equal to the reference", () => {
    const maxed = row({ state: "max_steps_error", answered: false, outcome: "no answer (max steps)", answer: "4", scores: { exact_match: 0 } });
    expect(noAnswer(maxed) && isFailing(maxed, ["exact_match"])).toBe(true);
    expect(isFailing(row({ ...maxed, scores: {} }), [])).toBe(true); // failing even with no scorer to say so
    expect(stateText(maxed)).toBe("no answer (max steps)");
    expect(stateText(row({ answered: true, outcome: "answered" }))).toBe("success");
    expect(noAnswer(row())).toBe(false); // rows of older evaluations have no `answered`
  });

  it("filters by agent, failing and text", () => {
    expect(filterRows(rows, { agent: "a", failing: false, query: "" }, ["exact_match"])).toHaveLength(2);
    expect(filterRows(rows, { agent: "", failing: true, query: "" }, ["exact_match"]).map((r) => r.key)).toEqual([
      "a|t2|0",
      "b|t1|0",
    ]);
    expect(filterRows(rows, { agent: "", failing: false, query: "BOOM" }, [])).toHaveLength(1);
  });

  it("sorts by a column or a scorer, both ways", () => {
    expect(sortRows(rows, "score:exact_match").map((r) => r.key)).toEqual(["b|t1|0", "a|t2|0", "a|t1|0"]);
    expect(sortRows(rows, "agent", true)[0].agent).toBe("b");
    expect(sortRows(rows, "")).toEqual(rows);
  });
});

describe("renderProgress", () => {
  it("shows counts, time left and each agent's running score", () => {
    const el = renderProgress(progress({ errors: 1 }));
    expect(el.querySelector(".nbe-status").textContent).toBe("Running");
    expect(el.querySelector(".nbe-counts").textContent).toBe("1/4 samples · 1 error · 120 tokens · 0:03 elapsed · ~0:09 left · 2 threads");
    expect(el.querySelector(".nbe-bar-fill").style.width).toBe("25%");
    expect(el.querySelector(".nbe-agent").textContent).toBe("a exact_match 1 (1 done)");
  });

  it("counts the runs without an answer, in all and per agent", () => {
    const agents = [{ agent: "a", done: 3, errors: 0, no_answer: 2, scores: { exact_match: 0.33 } }];
    const el = renderProgress(progress({ done: 3, no_answer: 2, agents }));
    expect(el.querySelector(".nbe-counts").textContent).toContain("3/4 samples · 2 no answer · ");
    expect(el.querySelector(".nbe-agent").textContent).toBe("a exact_match 0.33 (3 done, 2 no answer)");
  });

  it("says when it is done", () => {
    const el = renderProgress(progress({ status: "done", done: 4, remaining_s: 0 }));
    expect(el.dataset.status).toBe("done");
    expect(el.querySelector(".nbe-counts").textContent).not.toContain("left");
  });
});

describe("signal or noise", () => {
  const comparison = (over) => ({
    pair: "b − a",
    scorer: "exact_match",
    tasks: 10,
    difference: "-0.10 [-0.33, +0.00], p = 1.00",
    conclusion: "not significant",
    significant: false,
    ...over,
  });

  it("shows each pair's difference, interval and conclusion once the evaluation ends", () => {
    const el = renderProgress(progress({ status: "done", comparisons: [comparison(), comparison({ pair: "c − a", conclusion: "c is better", significant: true })] }));
    const rows = el.querySelectorAll("table.nbe-comparisons tbody tr");
    expect([...rows].map((r) => r.className)).toEqual(["nbe-nosig", "nbe-sig"]);
    expect(rows[0].querySelector(".nbe-c-difference").textContent).toBe("-0.10 [-0.33, +0.00], p = 1.00");
    expect(rows[1].querySelector(".nbe-c-conclusion").textContent).toBe("c is better");
    expect(renderComparisons([])).toBeNull();
  });

  it("says what one epoch cannot tell, and only when Python says so", () => {
    const note = "One epoch: … Run with epochs=3 or more";
    expect(renderProgress(progress({ note })).querySelector(".nbe-epoch-note").textContent).toBe(note);
    expect(renderProgress(progress({ note: "" })).querySelector(".nbe-epoch-note")).toBeNull();
  });

  it("counts each agent's varying tasks in its chip", () => {
    const agents = [{ agent: "a", done: 6, errors: 0, nondeterministic: 2, scores: { exact_match: 0.5 } }];
    expect(renderProgress(progress({ agents })).querySelector(".nbe-agent").textContent).toBe("a exact_match 0.50 (6 done, 2 varying)");
  });
});

describe("the widget", () => {
  const mount = (state) => {
    const model = fakeModel({ rows: [], scorers: ["exact_match"], progress: progress(), selected: "", ...state });
    model.save_changes = () => model.sent.push({ saved: model.get("selected") });
    const el = document.createElement("div");
    const cleanup = widget.render({ model, el });
    return { model, el, cleanup };
  };

  it("adds rows as they arrive, with score classes", () => {
    const { model, el } = mount();
    expect(el.querySelectorAll("tr.nbe-row")).toHaveLength(0);
    model.set("rows", [row(), row({ key: "a|t2|0", id: "t2", scores: { exact_match: 0 } })]);
    const rows = el.querySelectorAll("tr.nbe-row");
    expect(rows).toHaveLength(2);
    expect(rows[0].querySelector(".nbe-score").classList.contains("nbe-pass")).toBe(true);
    expect(rows[1].classList.contains("nbe-failing")).toBe(true);
    expect(el.dataset.rendered).toBe("1");
  });

  it("shows a run without an answer as 'no answer', failing, with a score of 0", () => {
    const maxed = row({ key: "a|t2|0", id: "t2", state: "max_steps_error", answered: false, outcome: "no answer (max steps)", scores: { exact_match: 0 } });
    const { el } = mount({ rows: [row({ answered: true, outcome: "answered" }), maxed] });
    const rows = el.querySelectorAll("tr.nbe-row");
    expect([...rows].map((r) => r.querySelector(".nbe-c-state").textContent)).toEqual(["success", "no answer (max steps)"]);
    expect(rows[1].classList.contains("nbe-no-answer") && rows[1].classList.contains("nbe-failing")).toBe(true);
    expect(rows[0].classList.contains("nbe-no-answer")).toBe(false);
    expect(rows[1].querySelector(".nbe-c-state").title).toContain("(state max_steps_error)");
    expect(rows[1].querySelector(".nbe-score").classList.contains("nbe-fail")).toBe(true);
    const box = el.querySelector(".nbe-failing-filter");
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    expect([...el.querySelectorAll("tr.nbe-row")].map((r) => r.dataset.key)).toEqual(["a|t2|0"]);
  });

  it("a click on a row selects it for Python, a second click closes it", () => {
    const { model, el } = mount({ rows: [row()] });
    el.querySelector("tr.nbe-row").click();
    expect(model.get("selected")).toBe("a|t1|0");
    expect(model.sent).toEqual([{ saved: "a|t1|0" }]);
    expect(el.querySelector("tr.nbe-row").classList.contains("nbe-selected")).toBe(true);
    el.querySelector("tr.nbe-row").click();
    expect(model.get("selected")).toBe("");
  });

  it("filters to failing rows and sorts by clicking a header", () => {
    const { el } = mount({ rows: [row(), row({ key: "a|t2|0", id: "t2", scores: { exact_match: 0 } })] });
    const box = el.querySelector(".nbe-failing-filter");
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    expect([...el.querySelectorAll("tr.nbe-row")].map((r) => r.dataset.key)).toEqual(["a|t2|0"]);
    box.checked = false;
    box.dispatchEvent(new Event("change"));
    el.querySelector("th[data-column='id']").click();
    el.querySelector("th[data-column='id']").click();
    expect([...el.querySelectorAll("tr.nbe-row")].map((r) => r.dataset.key)).toEqual(["a|t2|0", "a|t1|0"]);
  });

  it("shows at most MAX_ROWS rows and says how many more", () => {
    const many = Array.from({ length: MAX_ROWS + 3 }, (_, i) => row({ key: `a|t${i}|0`, id: `t${i}` }));
    const { el } = mount({ rows: many });
    expect(el.querySelectorAll("tr.nbe-row")).toHaveLength(MAX_ROWS);
    expect(el.querySelector(".nbe-more").textContent).toBe("3 more rows: filter to narrow");
  });

  it("marks the samples whose answers vary between epochs, and filters to them", () => {
    const rows = [row({ nondeterministic: true }), row({ key: "a|t2|0", id: "t2", nondeterministic: false })];
    const { el } = mount({ rows, progress: progress({ epochs: 3 }) });
    const marked = el.querySelectorAll("tr.nbe-varying");
    expect([...marked].map((r) => r.dataset.key)).toEqual(["a|t1|0"]);
    expect(marked[0].querySelector(".nbe-c-answer").textContent).toBe("4 · varies");
    expect(marked[0].querySelector(".nbe-varies").title).toContain("differ between epochs");
    const box = el.querySelector(".nbe-varying-filter");
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    expect([...el.querySelectorAll("tr.nbe-row")].map((r) => r.dataset.key)).toEqual(["a|t1|0"]);
    expect(mount({ rows }).el.querySelector(".nbe-varying-filter")).toBeNull(); // one epoch: nothing can vary
  });

  it("wraps long texts in a block that the stylesheet clamps, the whole text as the tooltip", () => {
    const task = "What is the total revenue of the orders placed in October 2024, in euros, rounded to cents?";
    const { el } = mount({ rows: [row({ task })] });
    const cell = el.querySelector("td.nbe-c-task");
    expect(cell.querySelector(".nbe-text").textContent).toBe(task);
    expect(cell.title).toBe(task);
  });

  it("keeps model output as text", () => {
    const { el } = mount({ rows: [row({ answer: "<img src=x onerror=alert(1)>" })] });
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector(".nbe-c-answer").textContent).toBe("<img src=x onerror=alert(1)>");
  });

  it("cleans up its listeners", () => {
    const { model, cleanup } = mount();
    cleanup();
    expect(model.listeners("change:rows")).toBe(0);
    expect(model.listeners("change:progress")).toBe(0);
  });
});
