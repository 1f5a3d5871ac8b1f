"""WCAG contrast of a widget's parts as the browser draws them (for the light and dark theme checks)."""

from __future__ import annotations

import json
from typing import Any

# [root, parts] -> {"ratios": {part: contrast of its text with what is behind it}, "background": root's luminance}
_MEASURE = """([root, parts]) => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = el => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3); } return [255, 255, 255]; };
  const ratio = el => { const a = lum(rgb(getComputedStyle(el).color).slice(0, 3)), b = lum(background(el));
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
  return {ratios: Object.fromEntries(Object.entries(parts).map(([k, s]) => [k, ratio(root.querySelector(s))])),
          background: lum(background(root))};
}"""


def contrast(root: Any, parts: dict[str, str]) -> tuple[dict[str, float], float]:
    """The contrast ratio of each part (name -> CSS selector inside ``root``, a Playwright locator) and the relative
    luminance of ``root``'s background (below 0.2: a dark theme)."""
    measured = root.evaluate(f"root => ({_MEASURE})([root, {json.dumps(parts)}])")
    return measured["ratios"], measured["background"]
