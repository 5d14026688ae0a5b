// The timeline chart: one row per object, events as marks (bars when they last), refresh markers
// as vertical lines, and an axis in seconds. A click seeks the player: a mark or marker to its
// time, a lane to the time under the pointer, a row's label to its object's first sighting.
import { svg, titled } from "./svg.js";

const LABEL_W = 150;
const ROW_H = 24;
const PLOT_W = 640;
const AXIS_H = 28;
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

/** Draw the chart for `graph` (scene graph) and `timeline` (duration, refresh markers); a click
 * calls `onSeek(seconds)`. */
export function drawTimeline(container, graph, timeline, onSeek = () => undefined) {
  const duration = Math.max(timeline.duration_s || 0, 0.1);
  const x = (t) => LABEL_W + (Math.min(Math.max(t, 0), duration) / duration) * PLOT_W;
  const objects = [...graph.objects].sort((a, b) => a.first_seen_s - b.first_seen_s);
  const scene = graph.events.filter((e) => !e.object_id);
  const rows = objects.length + (scene.length ? 1 : 0);
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
  objects.forEach((obj, i) => {
    const events = graph.events.filter((e) => e.object_id === obj.object_id);
    const group = row(chart, `${obj.class} ${obj.object_id.slice(-6)}`, i * ROW_H, events, x);
    group.dataset.objectId = obj.object_id;
    group.dataset.firstS = obj.first_seen_s;
    titled(group.firstChild, obj.attributes?.text ? `${obj.class}: ${obj.attributes.text}` : obj.class);
  });
  if (scene.length) {
    row(chart, "scene", objects.length * ROW_H, scene, x).setAttribute("class", "scene-row");
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
    const t = clickedTime(chart, event, toTime);
    if (t !== null && Number.isFinite(t)) onSeek(t);
  });
  container.replaceChildren(chart);
}
