// Token counts and durations, shown in step headers and the run footer.
import { h } from "./dom.js";

/** @import { TokenUsage } from "./types.js" */

/**
 * 950 -> "950", 1234 -> "1.2k", 2500000 -> "2.5M".
 * @param {number | null | undefined} n
 * @returns {string}
 */
export function formatCount(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  if (n < 1000) return String(Math.round(n));
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

/**
 * 0.0123 -> "12 ms", 3.456 -> "3.5 s", 125 -> "2 min 5 s".
 * @param {number | null | undefined} seconds
 * @returns {string | null}
 */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return null;
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

/**
 * A run's time limit: 600 -> "10 min", 90 -> "90 s", 5400 -> "1 h 30 min" (as nbagent/loop/deadline.py's
 * describe_limit).
 * @param {number} seconds
 * @returns {string}
 */
export function formatLimit(seconds) {
  if (seconds < 1) return `${seconds} s`;
  const whole = Math.round(seconds);
  if (whole % 60 && whole < 600) return `${whole} s`;
  const total = Math.round(whole / 60);
  const hours = Math.floor(total / 60);
  const minutes = total - hours * 60;
  if (!hours) return `${minutes} min`;
  return `${hours} h${minutes ? ` ${minutes} min` : ""}`;
}

/**
 * The chip of a run's time limit ("stops after 10 min"), or null for a run without one.
 * @param {number | null | undefined} seconds
 * @returns {HTMLElement | null}
 */
export function renderLimit(seconds) {
  if (typeof seconds !== "number" || !(seconds > 0)) return null;
  return h("span", { class: "nba-chip nba-limit", title: "the run's time limit (max_time): the run stops when it passes" },
    `stops after ${formatLimit(seconds)}`);
}

/**
 * "in 1.2k · out 80 tokens · 3.5 s" as small chips; null when there is nothing to show.
 * @param {Partial<TokenUsage> | null | undefined} usage
 * @param {number | null | undefined} duration seconds
 * @returns {HTMLElement | null}
 */
export function renderMeta(usage, duration) {
  const chips = [];
  if (usage && (usage.input_tokens || usage.output_tokens)) {
    chips.push(h("span", { class: "nba-chip nba-tokens", title: "input / output tokens" },
      `${formatCount(usage.input_tokens ?? 0)} in · ${formatCount(usage.output_tokens ?? 0)} out tokens`));
  }
  const time = formatDuration(duration);
  if (time) chips.push(h("span", { class: "nba-chip nba-duration", title: "duration" }, time));
  return chips.length ? h("span", { class: "nba-meta" }, chips) : null;
}
