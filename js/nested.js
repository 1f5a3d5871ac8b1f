// Runs of managed agents, nested inside the step that called them, collapsed by default.
import { h } from "./dom.js";
import { RunStatus } from "./status.js";

/** @import { Run } from "./types.js" */

/**
 * @param {Run[] | null | undefined} children runs of the managed agents (same schema as the top-level run)
 * @param {(run: Run, container: HTMLElement) => void} renderRunInto renders a run (injected: avoids an import cycle)
 * @returns {HTMLElement | null}
 */
export function renderChildren(children, renderRunInto) {
  if (!children || children.length === 0) return null;
  return h("div", { class: "nba-children" }, children.map((child) => {
    const body = h("div", { class: "nbagent nba-nested" });
    renderRunInto(child, body);
    const steps = (child.steps ?? []).filter((s) => s.kind === "action").length;
    const title = `${child.agent_name || "managed agent"} · ${steps} step${steps === 1 ? "" : "s"} · ${child.status ?? ""}`;
    return h("details", { class: "nba-child", open: child.status === RunStatus.RUNNING }, h("summary", null, title), body);
  }));
}
