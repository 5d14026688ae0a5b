// The one way the dashboard talks to the API: the Bearer key from this tab's sessionStorage.
export const KEY = "ves.apiKey";

export const $ = (id) => document.getElementById(id);

export function authHeaders(extra = {}) {
  return { Authorization: `Bearer ${sessionStorage.getItem(KEY)}`, ...extra };
}

export async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: authHeaders(options.headers || {}) });
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (!response.ok) {
    const error = new Error(body?.detail || `HTTP ${response.status}`);
    error.status = response.status;
    error.problem = body; // a problem+json document's other members (e.g. `interpreted`)
    throw error;
  }
  return body;
}

export function postJson(path, payload) {
  return api(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(payload ?? {}),
  });
}

// Thumbnails need the key too, so an <img src> cannot load them: fetch, then a blob: URL.
const blobUrls = [];

export async function loadImage(img, url) {
  const response = await fetch(url, { headers: authHeaders() });
  if (!response.ok) throw new Error(`thumbnail HTTP ${response.status}`);
  const objectUrl = URL.createObjectURL(await response.blob());
  blobUrls.push(objectUrl);
  img.src = objectUrl;
  await img.decode().catch(() => undefined);
  return img;
}

export function releaseImages() {
  blobUrls.splice(0).forEach((u) => URL.revokeObjectURL(u));
}

// DOM helpers: every text goes through textContent.
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

export function definitions(dl, pairs) {
  dl.replaceChildren();
  for (const [term, value] of pairs) {
    dl.append(el("dt", term), el("dd", value ?? "—"));
  }
}

export const seconds = (s) => (s === null || s === undefined ? "—" : `${Number(s).toFixed(1)} s`);
