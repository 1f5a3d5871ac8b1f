// "Show more": long blocks (logs, code, model text) are clipped to a few lines with a toggle.
// Length is measured in lines of text, not pixels, so the decision is the same in every front-end
// (and testable without layout).
import { h } from "./dom.js";

export const DEFAULT_MAX_LINES = 24;

/**
 * Number of lines in a text (a trailing newline does not count as a line).
 * @param {string | null | undefined} text
 * @returns {number}
 */
export function countLines(text) {
  if (!text) return 0;
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return body.split("\n").length;
}

/**
 * Wrap `content` so that it shows at most `maxLines` lines until "Show more" is clicked.
 * @param {HTMLElement} content
 * @param {{text?: string, maxLines?: number}} [options] `text` defaults to content.textContent
 * @returns {HTMLElement} the wrapper (or `content` itself when it is short)
 */
export function collapsible(content, { text, maxLines = DEFAULT_MAX_LINES } = {}) {
  const lines = countLines(text ?? content.textContent ?? "");
  if (lines <= maxLines) return content;
  const wrapper = h("div", { class: "nba-collapsible nba-collapsed" }, content);
  wrapper.style.setProperty("--nba-max-lines", String(maxLines));
  const hidden = lines - maxLines;
  const button = h("button", { class: "nba-more", type: "button", "aria-expanded": "false" });
  const sync = () => {
    const collapsed = wrapper.classList.contains("nba-collapsed");
    button.textContent = collapsed ? `Show more (${hidden} more line${hidden === 1 ? "" : "s"})` : "Show less";
    button.setAttribute("aria-expanded", String(!collapsed));
  };
  button.addEventListener("click", () => {
    wrapper.classList.toggle("nba-collapsed");
    sync();
  });
  sync();
  wrapper.append(button);
  return wrapper;
}
