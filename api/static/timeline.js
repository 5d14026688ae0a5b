// The timeline chart: one lane per thing (an identity's appearances share one; the first
// MAX_LANES shown, the rest behind an "N more" control), named as everywhere else, events as
// marks (bars when they last), refresh markers as vertical lines, and an axis in seconds. A
// click seeks the player: a mark or marker to its time, a lane to the time under the pointer, a
// row's label to its thing's first sighting; a click on a lane also selects its thing (its box
// on the video, its evidence).
import { $ } from "./api.js";
import { onSelect, selectObject, selectedObject, thingOf } from "./selection.js";
import { svg, titled } from "./svg.js";

const LABEL_W = 150;
const ROW_H = 24;
const PLOT_W = 640;
const AXIS_H = 28;
const MAX_LANES = 8;
let expanded = false; // whether every lane is shown
let redraw = null; // draws the chart again (the "more" control)
const BARS = new Set(["dwell", "text_seen"]);
let playheadX = null; // seconds to the drawn chart's x

function tickStep(duration) {
  return [1, 2, 5, 10, 30, 60, 120, 300, 600].find((s) => duration / s <= 12) || 1200;
}

function axis(chart, x, duration, height) {
  const step = tickStep(duration);
  chart.append(svg("line", { x1: x(0), y1: height, x2: x(duration), y2: height, class: "axis" }));
  for (let t = 0; t <= duration + 1e-9; t += step) {
    chart.append(svg("line", { x1: x(t), y1: height, x2: x(t), y2: height + 4, class: "axis" }));
    chart.append(svg("text", { x: x(t), y: height + 16, class: "tick" }, `${t} s`));
  }
}

function mark(event, x, y) {
  const label = `${event.type} at ${event.t_s.toFixed(1)} s`;
  if (BARS.has(event.type) && event.end_s !== null && event.end_s !== undefined) {
    const width = Math.max(2, x(event.end_s) - x(event.t_s));
    const bar = svg("rect", { x: x(event.t_s), y: y + 6, width, height: ROW_H - 12 });
    bar.setAttribute("class", `event bar ${event.type}`);
    bar.dataset.t = event.t_s;
    return titled(bar, `${label} to ${event.end_s.toFixed(1)} s`);
  }
  const dot = svg("circle", { cx: x(event.t_s), cy: y + ROW_H / 2, r: 4 });
  dot.setAttribute("class", `event ${event.type}`);
  dot.dataset.t = event.t_s;
  return titled(dot, label);
}

function row(chart, label, y, events, x) {
  const group = svg("g", { class: "row", transform: `translate(0 ${y})` });
  group.append(svg("text", { x: 4, y: ROW_H / 2 + 4, class: "label" }, label));
  group.append(svg("line", { x1: LABEL_W, y1: ROW_H / 2, x2: LABEL_W + PLOT_W, y2: ROW_H / 2 }));
  events.forEach((e) => group.append(mark(e, x, 0)));
  chart.append(group);
  return group;
}

// The time a click on the chart asks for: a mark's own, else the time under the pointer, else
// (on a row's label) the row's first time.
function clickedTime(chart, event, toTime) {
  const marked = event.target.closest(".event[data-t], .refresh[data-t]");
  if (marked) return Number(marked.dataset.t);
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(
    chart.getScreenCTM().inverse(),
  );
  if (point.x >= LABEL_W) return toTime(point.x);
  const first = event.target.closest("[data-first-s]");
  return first ? Number(first.dataset.firstS) : null;
}

/** Move the playhead to `t` seconds (drawn by drawTimeline; nothing before). */
export function movePlayhead(t) {
  const head = document.getElementById("playhead");
  if (!head || !playheadX) return;
  const x = playheadX(t);
  head.setAttribute("x1", x);
  head.setAttribute("x2", x);
}

/** The lanes: one per thing, [{ key, name, objects, first_s }] by first sighting. */
function lanesOf(graph) {
  const lanes = new Map();
  // In the order names are numbered (storage.artifacts.names): first sighting, then id.
  const objects = [...graph.objects].sort((a, b) => a.first_seen_s - b.first_seen_s
    || (a.object_id < b.object_id ? -1 : 1));
  for (const obj of objects) {
    const key = obj.identity_id || obj.object_id;
    if (!lanes.has(key)) lanes.set(key, { key, name: obj.name, objects: [], first_s: obj.first_seen_s });
    lanes.get(key).objects.push(obj);
  }
  return [...lanes.values()];
}

function moreControl(hidden, onToggle) {
  const button = $("timeline-more");
  button.hidden = hidden === 0 && !expanded;
  button.textContent = expanded ? "Fewer lanes" : `${hidden} more lanes`;
  button.onclick = onToggle;
}

/** Mark the lane of `objectId`'s thing (null: none). */
function markLane(objectId) {
  const thing = objectId ? thingOf(objectId) : null;
  for (const group of document.querySelectorAll("#timeline-chart g.row")) {
    group.classList.toggle("selected", group.dataset.thing === thing);
  }
}

/** Draw the chart for `graph` (scene graph) and `timeline` (duration, refresh markers); a click
 * calls `onSeek(seconds)`. */
export function drawTimeline(container, graph, timeline, onSeek = () => undefined, fresh = true) {
  if (fresh) expanded = false;
  redraw = () => drawTimeline(container, graph, timeline, onSeek, false);
  const duration = Math.max(timeline.duration_s || 0, 0.1);
  const x = (t) => LABEL_W + (Math.min(Math.max(t, 0), duration) / duration) * PLOT_W;
  const lanes = lanesOf(graph);
  const shown = expanded ? lanes : lanes.slice(0, MAX_LANES);
  moreControl(lanes.length - shown.length, () => { expanded = !expanded; redraw(); });
  const scene = graph.events.filter((e) => !e.object_id);
  const rows = shown.length + (scene.length ? 1 : 0);
  const height = rows * ROW_H + 4;
  const chart = svg("svg", {
    id: "timeline-chart", viewBox: `0 0 ${LABEL_W + PLOT_W + 20} ${height + AXIS_H}`,
    role: "img", "aria-label": "Timeline of objects and events",
  });
  for (const still of timeline.still || []) {
    const band = svg("rect", {
      x: x(still.start_s), y: 0, width: Math.max(x(still.end_s) - x(still.start_s), 0.5), height,
    });
    band.setAttribute("class", "still");
    band.dataset.t = still.start_s;
    const span = `${still.start_s.toFixed(1)}-${still.end_s.toFixed(1)} s`;
    chart.append(titled(band, `still ${span}: ${still.reason}`));
  }
  shown.forEach((lane, i) => {
    const ids = new Set(lane.objects.map((o) => o.object_id));
    const events = graph.events.filter((e) => ids.has(e.object_id));
    const group = row(chart, lane.name, i * ROW_H, events, x);
    group.dataset.objectId = lane.objects[0].object_id;
    group.dataset.thing = lane.key;
    group.dataset.name = lane.name;
    group.dataset.firstS = lane.first_s;
    const kind = lane.objects[0].class;
    const appearances = lane.objects.length > 1 ? `, ${lane.objects.length} appearances` : "";
    titled(group.firstChild, `${kind}${appearances}: ${[lane.key, ...ids].filter((v, k, a) => a.indexOf(v) === k).join(" ")}`);
  });
  if (scene.length) {
    row(chart, "scene", shown.length * ROW_H, scene, x).setAttribute("class", "scene-row");
  }
  for (const marker of timeline.refresh_markers) {
    const line = svg("line", { x1: x(marker.t_s), y1: 0, x2: x(marker.t_s), y2: height });
    line.setAttribute("class", "refresh");
    line.dataset.t = marker.t_s;
    chart.append(titled(line, `refresh at ${marker.t_s.toFixed(1)} s: ${marker.reason}`));
  }
  axis(chart, x, duration, height);
  const head = svg("line", { id: "playhead", x1: x(0), y1: 0, x2: x(0), y2: height });
  playheadX = x;
  chart.append(head);
  const toTime = (px) => (Math.min(Math.max(px - LABEL_W, 0), PLOT_W) / PLOT_W) * duration;
  chart.addEventListener("click", (event) => {
    const lane = event.target.closest("g.row[data-object-id]");
    if (lane) selectObject(lane.dataset.objectId, "timeline");
    const t = clickedTime(chart, event, toTime);
    if (t !== null && Number.isFinite(t)) onSeek(t);
  });
  container.replaceChildren(chart);
  markLane(selectedObject());
}

// A thing selected elsewhere (its box, its evidence): mark its lane, shown even if collapsed.
onSelect((objectId) => {
  const thing = objectId ? thingOf(objectId) : null;
  const chart = document.getElementById("timeline-chart");
  if (!chart) return;
  const drawnLane = chart.querySelector(`g.row[data-thing="${CSS.escape(thing || "")}"]`);
  if (thing && !drawnLane && !expanded && redraw) {
    expanded = true;
    redraw();
  }
  markLane(objectId);
});
