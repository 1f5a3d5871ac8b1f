// A step's permission asks and their answers, one line each ("Allowed once: write `/work/out.csv` (by you)"):
// the text comes from Python (nbagent/views/permissions.py), so the widget and the static page say the same.
// The line comes as parts (words, target, detail): the target shows as code, one text node, never parsed. Styles: js/asks.css (bundled through the controls).
import { askNodes } from "./asks.js";
import { h } from "./dom.js";

/** @import { Permission } from "./types.js" */

/**
 * The list of a step's permissions, or null when the sandbox refused it nothing.
 * @param {Permission[] | null | undefined} permissions
 * @returns {HTMLElement | null}
 */
export function renderPermissions(permissions) {
  if (!permissions || permissions.length === 0) return null;
  return h(
    "ul",
    { class: "nba-block nba-permissions", "aria-label": "Permissions" },
    permissions.map((entry) =>
      h("li", { class: "nba-permission", dataset: { answer: entry.answer } }, askNodes(entry.parts, entry.text)),
    ),
  );
}
