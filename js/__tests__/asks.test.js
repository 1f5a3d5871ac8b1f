// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { ASK_BUTTONS, AskView, askNodes, pendingAsk } from "../asks.js";
import { ControlsView } from "../controls.js";
import { renderPermissions } from "../permissions.js";
import { RunView } from "../run.js";
import { sampleRun } from "./helpers.js";

const ASK = { step: 3, kind: "write", target: "/work/out/report.csv", text: "Step 3 wants to write `out/report.csv`" };

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
  it("shows the backticked target as code, the rest as text", () => {
    const nodes = askNodes(ASK.text);
    expect(nodes[0]).toBe("Step 3 wants to write ");
    expect(nodes[1].tagName).toBe("CODE");
    expect(nodes[1].textContent).toBe("out/report.csv");
    expect(askNodes("Step 1 wants to use the network")).toEqual(["Step 1 wants to use the network"]);
  });

  it("never turns the text into markup", () => {
    const nodes = askNodes("Step 1 wants to read `<img src=x onerror=alert(1)>`");
    expect(nodes[1].textContent).toBe("<img src=x onerror=alert(1)>");
    expect(nodes[1].children).toHaveLength(0);
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
    asks.update(asking({ pending_ask: { ...ASK, step: 4, text: "Step 4 wants to write `out/report.csv`" } }));
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
    run.steps[1].permissions = [{ kind: "write", target: "/w/a.csv", answer: "deny", text: "Denied: write `/w/a.csv`" }];
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
      { kind: "write", target: "/w/a.csv", answer: "once", text: "Allowed once: write `/w/a.csv` (by you)" },
      { kind: "connect", target: "x.org:443", answer: "deny", text: "Denied: connect to `x.org:443` (by you)" },
    ]);
    expect([...list.querySelectorAll("li")].map((li) => [li.dataset.answer, li.textContent])).toEqual([
      ["once", "Allowed once: write /w/a.csv (by you)"],
      ["deny", "Denied: connect to x.org:443 (by you)"],
    ]);
    expect([...list.querySelectorAll("li code")].map((code) => code.textContent)).toEqual(["/w/a.csv", "x.org:443"]);
    expect(renderPermissions([])).toBe(null);
    expect(renderPermissions(undefined)).toBe(null);
  });
});
