// Images travel as binary buffers (ipywidgets turns them into DataViews); steps refer to them by index.
import { h } from "./dom.js";

/**
 * Image bytes: a DataView from ipywidgets (the `images` trait, pushed buffers), or bytes from elsewhere.
 * @typedef {DataView | ArrayBuffer | Uint8Array} ImageBuffer
 */

/**
 * Where a view gets the images its steps refer to by index.
 * @typedef {object} ImageSource
 * @property {(index: number) => ImageBuffer | undefined} get the buffer at `index`, if received
 * @property {(buffer: ImageBuffer) => string} url an object URL for the buffer
 * @property {(index: number) => void} [missing] called for an index not received yet
 */

/**
 * Object URLs for image buffers, one per buffer, revoked together when the view goes away.
 * @returns {{url: (buffer: ImageBuffer) => string, revokeAll: () => void, size: () => number}}
 */
export function createImageUrls() {
  /** @type {Map<ImageBuffer, string>} */
  const urls = new Map();
  return {
    url(buffer) {
      let url = urls.get(buffer);
      if (!url) {
        // (a BlobPart excludes views of a SharedArrayBuffer, which never carries images here)
        const part = /** @type {BlobPart} */ (buffer);
        url = URL.createObjectURL(new Blob([part], { type: sniffType(buffer) }));
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

/**
 * MIME type from the first bytes (PNG is what Python sends; JPEG/GIF/WebP are accepted too).
 * @param {ImageBuffer} buffer
 * @returns {string}
 */
export function sniffType(buffer) {
  const length = Math.min(buffer.byteLength, 12);
  const bytes = buffer instanceof ArrayBuffer
    ? new Uint8Array(buffer, 0, length)
    : new Uint8Array(buffer.buffer, buffer.byteOffset, length);
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  if (bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) return "image/gif";
  if (bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[8] === 0x57 && bytes[9] === 0x45) return "image/webp";
  return "image/png";
}

/**
 * The images of a step.
 * @param {number[] | null | undefined} indexes positions in the widget's `images` list
 * @param {ImageSource} source
 * @returns {HTMLElement | null}
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
