// Images travel as binary buffers (ipywidgets turns them into DataViews); steps refer to them by index.
import { h } from "./dom.js";

/**
 * Object URLs for image buffers, one per buffer, revoked together when the view goes away.
 * @returns {{url: (buffer: DataView|ArrayBuffer|Uint8Array) => string, revokeAll: () => void, size: () => number}}
 */
export function createImageUrls() {
  const urls = new Map();
  return {
    url(buffer) {
      let url = urls.get(buffer);
      if (!url) {
        url = URL.createObjectURL(new Blob([buffer], { type: sniffType(buffer) }));
        urls.set(buffer, url);
      }
      return url;
    },
    revokeAll() {
      for (const url of urls.values()) URL.revokeObjectURL(url);
      urls.clear();
    },
    size: () => urls.size,
  };
}

/** MIME type from the first bytes (PNG is what Python sends; JPEG/GIF/WebP are accepted too). */
export function sniffType(buffer) {
  const bytes = buffer instanceof DataView
    ? new Uint8Array(buffer.buffer, buffer.byteOffset, Math.min(buffer.byteLength, 12))
    : new Uint8Array(buffer instanceof ArrayBuffer ? buffer : buffer.buffer, buffer.byteOffset ?? 0, Math.min(buffer.byteLength, 12));
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  if (bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) return "image/gif";
  if (bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[8] === 0x57 && bytes[9] === 0x45) return "image/webp";
  return "image/png";
}

/**
 * The images of a step.
 * @param {number[]} indexes positions in the widget's `images` list
 * @param {{get: (i: number) => any, url: (buffer: any) => string, missing?: (i: number) => void}} source
 * @returns {HTMLElement|null}
 */
export function renderImages(indexes, source) {
  if (!indexes || indexes.length === 0) return null;
  const items = indexes.map((index) => {
    const buffer = source.get(index);
    if (!buffer) {
      source.missing?.(index);
      return h("div", { class: "nba-img-missing", dataset: { image: index } }, `image ${index} not received yet`);
    }
    return h("img", { class: "nba-img", src: source.url(buffer), alt: `image ${index}`, dataset: { image: index } });
  });
  return h("div", { class: "nba-images" }, items);
}
