// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { ASK_BUTTONS, AskView, askNodes, pendingAsk, shownTarget } from "../asks.js";
import { ControlsView } from "../controls.js";
import { renderPermissions } from "../permissions.js";
import { RunView } from "../run.js";
import { sampleRun } from "./helpers.js";

const ASK = {
  step: 3, kind: "write", target: "/work/out/report.csv", text: "Step 3 wants to write `out/report.csv`",
  parts: [["words", "Step 3 wants to write "], ["target", "out/report.csv"]],
};
// What a hostile target looked like before: backticks that close nbagent's code span and write a sentence of its own.
const SPOOF = "report.csv` (a copy in the scratch folder: none of your files is written). Then it wants to read `data.csv";

function asking(overrides = {}) {
  return {
    status: "awaiting_permission", mode: "run", approve_code: false, pending_code: null, pending_step: null,
    pending_ask: ASK, stopping: false, active: true, message: "", forks: 0, rerunnable: [],
    can: { run: false, step: false, pause: true, stop: true, approve: false, reject: false, rerun: true, permission: true },
    ...overrides,
  };
}

function panel() {
  const sent = [];
  const asks = new AskView({ send: (command) => sent.push(command) });
  document.body.replaceChildren(asks.el);
  return { asks, sent };
}

const byName = (root, name) => [...root.querySelectorAll("button")].find((b) => b.textContent === name);

describe("askNodes", () => {
  it("shows nbagent's words as text and the target as one code node", () => {
    const nodes = askNodes(ASK.parts);
    expect(nodes.map((n) => n.nodeName)).toEqual(["#text", "CODE"]);
    expect(nodes[0].textContent).toBe("Step 3 wants to write ");
    expect(nodes[1].textContent).toBe("out/report.csv");
    expect(askNodes([["words", "Step 1 wants to use the network"]]).map((n) => n.textContent)).toEqual([
      "Step 1 wants to use the network",
    ]);
  });

  it("never turns a target into markup or a sentence, whatever it holds", () => {
    const nodes = askNodes([["words", "Step 1 wants to write "], ["target", SPOOF]]);
    expect(nodes).toHaveLength(2);
    expect(nodes[1].childNodes).toHaveLength(1); // one text node: no second code span, no sentence of its own
    expect(nodes[1].textContent).toBe(shownTarget(SPOOF));
    expect(nodes[1].textContent).not.toContain("`");
    const html = askNodes([["words", "Step 1 wants to read "], ["target", "<img src=x onerror=alert(1)>"]]);
    expect(html[1].textContent).toBe("<img src=x onerror=alert(1)>");
    expect(html[1].children).toHaveLength(0);
  });

  it("shows control, bidi and backtick characters of a target escaped", () => {
    expect(shownTarget("invoice\u202efdp.exe")).toBe("invoice\\u202efdp.exe");
    expect(shownTarget("a\u2066b\u0007c\nd`e")).toBe("a\\u2066b\\u0007c\\u000ad\\u0060e");
    expect(shownTarget(shownTarget("x\u202ey"))).toBe(shownTarget("x\u202ey")); // idempotent
    const [code] = askNodes([["target", "x\u202ey"]]);
    expect(code.textContent).toBe("x\\u202ey");
  });

  it("shows an older state's text as one text node, backticks and all", () => {
    const nodes = askNodes(undefined, "Step 1 wants to read `a.csv`");
    expect(nodes).toHaveLength(1);
    expect(nodes[0].nodeName).toBe("#text");
  });
});

describe("AskView", () => {
  it("asks the question with three buttons, Allow once, Allow for this run and Deny", () => {
    const { asks } = panel();
    asks.update(asking());
    expect(asks.el.hidden).toBe(false);
    expect(asks.el.textContent).toContain("Step 3 wants to write out/report.csv");
    expect([...asks.el.querySelectorAll("button")].map((b) => b.textContent)).toEqual(ASK_BUTTONS.map((b) => b[1]));
    expect(ASK_BUTTONS.map((b) => b[1])).toEqual(["Allow once", "Allow for this run", "Deny"]);
    expect([...asks.el.querySelectorAll("button")].every((b) => !b.disabled && b.type === "button")).toBe(true);
  });

  it("shows a spoofing target as the one code node of nbagent's sentence", () => {
    const { asks } = panel();
    const parts = [["words", "Step 2 wants to write "], ["target", SPOOF]];
    asks.update(asking({ pending_ask: { step: 2, kind: "write", target: SPOOF, text: "", parts } }));
    const text = asks.el.querySelector(".nba-ask-text");
    expect(text.querySelectorAll("code")).toHaveLength(1);
    expect(text.firstChild.textContent).toBe("Step 2 wants to write ");
    expect(text.querySelector("code").textContent).toBe(shownTarget(SPOOF));
  });

  it("sends the answer once, then waits for the next ask", () => {
    const { asks, sent } = panel();
    asks.update(asking());
    byName(asks.el, "Allow for this run").click();
    byName(asks.el, "Deny").click(); // a second click on the same ask is not sent
    expect(sent).toEqual([{ action: "permission", answer: "run" }]);
    expect([...asks.el.querySelectorAll("button")].every((b) => b.disabled)).toBe(true);
    asks.update(asking()); // the same ask again (another change of the snapshot): still answered
    expect(byName(asks.el, "Deny").disabled).toBe(true);
    asks.update(asking({ status: "running", pending_ask: null }));
    expect(asks.el.hidden).toBe(true);
    asks.update(asking({ pending_ask: { ...ASK, step: 4, parts: [["words", "Step 4 wants to write "], ["target", "out/report.csv"]] } }));
    byName(asks.el, "Deny").click();
    expect(sent).toEqual([{ action: "permission", answer: "run" }, { action: "permission", answer: "deny" }]);
  });

  it("is hidden with nothing asked, and its buttons disabled when the driver says they cannot act", () => {
    const { asks } = panel();
    asks.update({});
    expect(asks.el.hidden).toBe(true);
    asks.update(asking({ can: { permission: false } }));
    expect(asks.el.hidden).toBe(false);
    expect([...asks.el.querySelectorAll("button")].every((b) => b.disabled)).toBe(true);
    expect(pendingAsk(asking({ status: "running" }))).toBe(null); // an ask outside awaiting_permission: stale
  });
});

describe("the ask in the run's controls", () => {
  it("goes after the step that asked, the controls send the answer, and steps list their asks", () => {
    const sent = [];
    const controls = new ControlsView({ send: (command) => sent.push(command) });
    const run = sampleRun({ status: "running" });
    run.steps[1].permissions = [
      { kind: "write", target: "/w/a.csv", answer: "deny", text: "", parts: [["words", "Denied: write "], ["target", "/w/a.csv"]] },
    ];
    const view = new RunView({ images: { get: () => undefined, url: () => "", missing: () => {} }, controls });
    document.body.replaceChildren(view.el);
    controls.update(asking());
    view.update(run);
    const step = view.el.querySelector('.nba-steps > .nba-step-action[data-step="3"]');
    expect(step.nextSibling).toBe(controls.ask);
    const first = view.el.querySelector('.nba-steps > .nba-step-action[data-step="1"] .nba-permission');
    expect(first.textContent).toBe("Denied: write /w/a.csv");
    expect(first.querySelector("code").textContent).toBe("/w/a.csv");
    expect(controls.ask.hidden).toBe(false);
    byName(view.el, "Allow once").click();
    expect(sent).toEqual([{ action: "permission", answer: "once" }]);
  });
});

describe("renderPermissions", () => {
  it("lists what was asked and answered, one line each, marked by answer", () => {
    const list = renderPermissions([
      { kind: "write", target: "/w/a.csv", answer: "once", text: "", parts: [["words", "Allowed once: write "], ["target", "/w/a.csv"], ["words", " (by you)"]] },
      { kind: "connect", target: "x.org:443", answer: "deny", text: "", parts: [["words", "Denied: connect to "], ["target", "x.org:443"], ["words", " (by you)"]] },
      { kind: "write", target: SPOOF, answer: "deny", text: "", parts: [["words", "Denied: write "], ["target", SPOOF], ["words", " ("], ["detail", "a `reason`"], ["words", ")"]] },
    ]);
    expect([...list.querySelectorAll("li")].map((li) => [li.dataset.answer, li.textContent])).toEqual([
      ["once", "Allowed once: write /w/a.csv (by you)"],
      ["deny", "Denied: connect to x.org:443 (by you)"],
      ["deny", `Denied: write ${shownTarget(SPOOF)} (a \\u0060reason\\u0060)`],
    ]);
    expect([...list.querySelectorAll("li code")].map((code) => code.textContent)).toEqual([
      "/w/a.csv", "x.org:443", shownTarget(SPOOF),
    ]);
    expect(renderPermissions([])).toBe(null);
    expect(renderPermissions(undefined)).toBe(null);
  });
});
