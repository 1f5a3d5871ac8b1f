// Tiny DOM helpers. Everything the widget shows is built with these: text goes in
// through text nodes, never through innerHTML, so model output cannot inject markup.

/**
 * An attribute value: `class` and plain attributes take text (true: present, false/null: absent),
 * `dataset` an object of data-* values, `on<event>` a handler.
 * @typedef {string | number | boolean | null | undefined | Record<string, string | number | null | undefined>
 *   | ((event: Event) => void)} AttrValue
 */

/**
 * A child: nodes and strings (as text) are appended, arrays flattened, null/undefined/false skipped.
 * @typedef {Node | string | null | undefined | false | Child[]} Child
 */

/**
 * Create an element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, AttrValue> | null} [attrs] `class`, `dataset`, `on<event>` handlers, other attributes
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = String(value);
    else if (key === "dataset" && typeof value === "object") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/**
 * Append children (strings become text nodes; null/false are skipped; arrays are flattened).
 * @template {ParentNode} T
 * @param {T} parent
 * @param {Child[]} children
 * @returns {T}
 */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return parent;
}

/**
 * Remove all children of `el`.
 * @template {Node} T
 * @param {T} el
 * @returns {T}
 */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}
