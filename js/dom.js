// Tiny DOM helpers. Everything the widget shows is built with these: text goes in
// through text nodes, never through innerHTML, so model output cannot inject markup.

/**
 * Create an element.
 * @param {string} tag
 * @param {Record<string, any>|null} [attrs] `class`, `dataset`, `on<event>` handlers, other attributes
 * @param {...(Node|string|null|undefined|false|Array<any>)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/** Append children (strings become text nodes; null/false are skipped; arrays are flattened). */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return parent;
}

/** Remove all children of `el`. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}
