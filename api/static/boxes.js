// The run's tracked boxes drawn over the playing video: a <canvas> laid over the picture (the
// part of the <video> element the frame fills), redrawn at every frame the browser presents
// (requestVideoFrameCallback; timeupdate and requestAnimationFrame where it is missing).
// Boxes are kept at sampled frames only, so a box between two rows is interpolated linearly;
// a filled-in row (`estimated`) is drawn dashed. Each box carries its object's name; a click on
// one selects its object, and the selected object's box is drawn in its own colour.
import { $, api } from "./api.js";
import { onSelect, selectObject, selectedObject, thingOf } from "./selection.js";

const MAX_GAP_S = 1.5; // rows further apart than this: the object was not followed between them
const EDGE_S = 0.05; // a box stays this long past its first and last rows (half a frame at 10 fps)
const STROKE = "#f6c90e";
export const SELECTED_STROKE = "#ff00ff"; // the tests find the selected box by this colour
const LINE_W = 2;
const SELECTED_W = 3;
let tracks = []; // [{ object_id, name, class, identity_id, rows: {t_s, bbox, estimated} }]
let drawn = []; // what the last draw put on the canvas: [{ object_id, box: [x1, y1, x2, y2] px }]
let loading = null;

function video() {
  return $("player");
}

function canvas() {
  return $("boxes");
}

/** Where the frame is drawn inside the <video> element (object-fit: contain), in CSS px. */
function pictureRect(v) {
  const w = v.clientWidth;
  const h = v.clientHeight;
  if (!v.videoWidth || !v.videoHeight || !w || !h) return null;
  const scale = Math.min(w / v.videoWidth, h / v.videoHeight);
  const pw = v.videoWidth * scale;
  const ph = v.videoHeight * scale;
  return { left: v.offsetLeft + (w - pw) / 2, top: v.offsetTop + (h - ph) / 2, width: pw, height: ph };
}

/** The first index whose time is after `t` (binary search over sorted times). */
function after(times, t) {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] <= t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** An object's box at `t` ({bbox, estimated}), interpolated between its rows; null when it was
 * not followed then (before its first row, after its last, or in a gap longer than MAX_GAP_S). */
export function boxAt(rows, t) {
  const times = rows.t_s;
  const n = times.length;
  if (!n || t < times[0] - EDGE_S || t > times[n - 1] + EDGE_S) return null;
  const i = after(times, t);
  const row = (k) => ({ bbox: rows.bbox[k], estimated: rows.estimated[k] });
  if (i === 0) return row(0);
  if (i === n) return row(n - 1);
  const a = i - 1;
  const gap = times[i] - times[a];
  if (gap > MAX_GAP_S) return null;
  const f = (t - times[a]) / gap;
  const bbox = rows.bbox[a].map((v, k) => v + (rows.bbox[i][k] - v) * f);
  return { bbox, estimated: f < 0.5 ? rows.estimated[a] : rows.estimated[i] };
}

function label(ctx, text, x, y, selected) {
  ctx.font = "12px system-ui, sans-serif";
  const width = ctx.measureText(text).width + 6;
  const top = Math.max(0, y - 16);
  ctx.setLineDash([]);
  ctx.fillStyle = "rgba(29, 35, 43, 0.75)";
  ctx.fillRect(x, top, width, 15);
  ctx.fillStyle = selected ? "#ffd6ff" : "#ffffff";
  ctx.fillText(text, x + 3, top + 11);
}

/** Draw every box shown at the player's current time. */
export function drawBoxes() {
  const v = video();
  const c = canvas();
  if (!c) return;
  const rect = pictureRect(v);
  const on = $("boxes-toggle").checked && !v.hidden && rect;
  c.hidden = !on;
  drawn = [];
  if (!on) return;
  const ratio = window.devicePixelRatio || 1;
  Object.assign(c.style, {
    left: `${rect.left}px`, top: `${rect.top}px`, width: `${rect.width}px`, height: `${rect.height}px`,
  });
  const w = Math.round(rect.width * ratio);
  const h = Math.round(rect.height * ratio);
  if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
  const ctx = c.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, rect.width, rect.height);
  const t = v.currentTime;
  const chosen = selectedObject();
  const chosenThing = chosen ? thingOf(chosen) : null;
  const shown = tracks.map((o) => ({ o, at: boxAt(o.rows, t) })).filter((s) => s.at);
  // The selected object last, so it is drawn over the others.
  shown.sort((a, b) => Number(thingOf(a.o.object_id) === chosenThing) - Number(thingOf(b.o.object_id) === chosenThing));
  for (const { o, at } of shown) {
    const selected = chosenThing !== null && thingOf(o.object_id) === chosenThing;
    const [x1, y1, x2, y2] = at.bbox;
    const box = [x1 * rect.width, y1 * rect.height, x2 * rect.width, y2 * rect.height];
    ctx.strokeStyle = selected ? SELECTED_STROKE : STROKE;
    ctx.lineWidth = selected ? SELECTED_W : LINE_W;
    ctx.setLineDash(at.estimated ? [6, 4] : []);
    ctx.strokeRect(box[0], box[1], box[2] - box[0], box[3] - box[1]);
    label(ctx, o.name, box[0], box[1], selected);
    drawn.push({ object_id: o.object_id, box });
  }
  c.dataset.t = String(t); // the time drawn (the tests wait for it)
  c.dataset.boxes = String(drawn.length);
}

/** The object whose box is under (x, y) CSS px of the canvas (the smallest box if several). */
function hitAt(x, y) {
  const hits = drawn.filter(({ box }) => x >= box[0] - 3 && x <= box[2] + 3 && y >= box[1] - 3 && y <= box[3] + 3);
  hits.sort((a, b) => (a.box[2] - a.box[0]) * (a.box[3] - a.box[1]) - (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]));
  return hits[0]?.object_id || null;
}

/** Load `videoId`'s tracked boxes (run `runId`, the one the page shows) and draw them. */
export async function loadBoxes(videoId, runId) {
  tracks = [];
  drawBoxes();
  loading = videoId;
  const query = runId ? `?run_id=${encodeURIComponent(runId)}` : "";
  const answer = await api(`/api/product/videos/${encodeURIComponent(videoId)}/tracks${query}`);
  if (loading !== videoId) return;
  tracks = answer.objects;
  canvas().dataset.objects = String(tracks.length);
  drawBoxes();
}

export function clearBoxes() {
  loading = null;
  tracks = [];
  drawBoxes();
}

// Redraw at every presented frame while the video plays, and at every seek.
function followFrames() {
  const v = video();
  if ("requestVideoFrameCallback" in HTMLVideoElement.prototype) {
    const onFrame = () => { drawBoxes(); v.requestVideoFrameCallback(onFrame); };
    v.requestVideoFrameCallback(onFrame);
  } else {
    const onTick = () => { drawBoxes(); if (!v.paused) requestAnimationFrame(onTick); };
    v.addEventListener("play", () => requestAnimationFrame(onTick));
    v.addEventListener("timeupdate", drawBoxes);
  }
  for (const name of ["seeked", "loadedmetadata", "pause"]) v.addEventListener(name, drawBoxes);
  window.addEventListener("resize", drawBoxes);
}

followFrames();
$("boxes-toggle").addEventListener("change", drawBoxes);
onSelect(() => drawBoxes());

// The canvas lets clicks through (the video's own controls stay usable); a click on the picture
// that lands on a box selects its object. Caught on the way down (capture), before the player's
// own controls can take it.
$("stage").addEventListener("click", (event) => {
  const c = canvas();
  if (c.hidden) return;
  const r = c.getBoundingClientRect();
  const hit = hitAt(event.clientX - r.left, event.clientY - r.top);
  if (!hit) return;
  event.preventDefault();
  selectObject(hit, "boxes");
}, true);
