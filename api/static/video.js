// One video's page: the player, timeline, scene over a frame, evidence spans, cost report and
// the ask box. What has a time (a timeline mark, a span, a citation) seeks the player.
import { $, api, definitions, el, loadImage, postJson, releaseImages, seconds } from "./api.js";
import { showAudit } from "./audit.js";
import { clearBoxes, loadBoxes } from "./boxes.js";
import { drawEvidence, selectSpan } from "./evidence.js";
import { resetExport } from "./exports.js";
import { followPlayer, loadPlayer, resetPlayer, seekTo } from "./player.js";
import { setObjects } from "./selection.js";
import { svg, titled } from "./svg.js";
import { drawTimeline, movePlayhead } from "./timeline.js";

let current = null;

function firstBoxes(graph, spans) {
  const ordered = [...spans].sort((a, b) => a.start_s - b.start_s);
  const boxes = [];
  for (const obj of graph.objects) {
    const frame = ordered
      .filter((s) => s.object_id === obj.object_id)
      .flatMap((s) => s.frames)
      .find((f) => f.bbox);
    if (frame) boxes.push({ obj, bbox: frame.bbox });
  }
  return boxes;
}

// Zones and each object's first box, in normalised coordinates over the first thumbnail.
function drawScene(graph, spans) {
  const frame = spans.flatMap((s) => s.frames)[0];
  const holder = $("scene");
  holder.replaceChildren();
  if (!frame) {
    holder.append(el("p", "No evidence frame to draw on."));
    return;
  }
  const img = el("img");
  img.alt = "First evidence frame";
  const overlay = svg("svg", { viewBox: "0 0 1 1", preserveAspectRatio: "none", class: "overlay" });
  for (const zone of graph.zones) {
    const points = zone.polygon.map(([px, py]) => `${px},${py}`).join(" ");
    overlay.append(titled(svg("polygon", { points, class: "zone" }), `zone ${zone.name}`));
  }
  for (const { obj, bbox } of firstBoxes(graph, spans)) {
    const [x1, y1, x2, y2] = bbox;
    const box = svg("rect", { x: x1, y: y1, width: x2 - x1, height: y2 - y1, class: "box" });
    overlay.append(titled(box, `${obj.name} (${obj.class} ${obj.object_id})`));
    overlay.append(svg("text", { x: x1, y: Math.max(y1 - 0.01, 0.04), class: "box-label" }, obj.name));
  }
  holder.append(img, overlay);
  loadImage(img, frame.thumbnail_url).catch((error) => { img.alt = error.message; });
}

function drawCost(cost) {
  const stages = Object.entries(cost.stages || {})
    .map(([name, s]) => `${name} ${Number(s).toFixed(2)} s`).join(", ");
  const frames = cost.frames || {};
  definitions($("cost"), [
    ["Detector", cost.detector_mode],
    ["Fallback", cost.fallback?.used ? `yes: ${cost.fallback.reason}` : "no"],
    ["Processed", `${seconds(cost.processed_s)} of ${seconds(cost.duration_s)}`],
    ["Frames", `${frames.decoded} decoded, ${frames.sampled} sampled, ${frames.analysed} analysed`],
    ["Stages", stages],
    ["Retention", `${cost.retention?.days} days (until ${cost.retention?.expires_at})`],
    ["Cost", cost.cost ? `${cost.cost.amount} ${cost.cost.unit}` : null],
  ]);
}

/** Expand the span `evidenceId`, bring it into view and play the video from its start. */
export function highlightSpan(evidenceId) {
  const item = selectSpan(evidenceId);
  if (!item) return;
  item.scrollIntoView({ block: "center" });
  seekTo(Number(item.dataset.startS));
}

function drawAnswer(answer) {
  const box = $("answer");
  box.replaceChildren(el("p", answer.answer, "answer-text"));
  const verdict = answer.grounded
    ? `grounded (confidence ${Number(answer.confidence).toFixed(2)})`
    : `refused: ${answer.refusal_reason}`;
  box.append(el("p", verdict, answer.grounded ? "grounded" : "refused"));
  const list = el("ul", undefined, "citations");
  for (const cite of answer.citations) {
    const what = cite.object_name || "the scene";
    const link = el("a", `${what} (${seconds(cite.start_s)} – ${seconds(cite.end_s)})`);
    link.title = [cite.evidence_id, cite.object_id].filter(Boolean).join(" · ");
    link.href = `#span-${cite.evidence_id}`;
    link.dataset.evidenceId = cite.evidence_id;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      highlightSpan(cite.evidence_id);
    });
    const item = el("li");
    item.append(link, " ", el("code", cite.evidence_id, "raw-id"));
    list.append(item);
  }
  box.append(list);
}

/** Show `video` below the listing, its player at `t` seconds when given (then playing); its
 * artifacts exist only once a run succeeded. */
export async function openVideo(video, t = null) {
  current = video.video_id;
  releaseImages();
  resetPlayer();
  clearBoxes();
  setObjects([]);
  const player = loadPlayer(video.video_id);
  if (t !== null) seekTo(t);
  $("detail").hidden = false;
  $("detail-title").textContent = video.title;
  $("detail-error").textContent = "";
  for (const id of ["timeline", "scene", "cost", "evidence", "answer", "audit-rows", "ev-summary"]) {
    $(id).replaceChildren();
  }
  $("timeline-more").hidden = true;
  $("ev-more").hidden = true;
  resetExport(video.video_id);
  const base = `/api/product/videos/${encodeURIComponent(video.video_id)}`;
  try {
    const [graph, timeline, view, cost] = await Promise.all(
      ["scene-graph", "timeline", "evidence-view", "cost"].map((p) => api(`${base}/${p}`)),
    );
    if (current !== video.video_id) return;
    setObjects(graph.objects);
    loadBoxes(video.video_id, graph.run_id).catch((error) => {
      $("player-note").textContent = `No boxes: ${error.message}.`;
    });
    drawTimeline($("timeline"), graph, timeline, seekTo);
    drawEvidence($("evidence"), video.video_id, view.spans, graph, seekTo);
    drawScene(graph, view.spans);
    drawCost(cost);
  } catch (error) {
    $("detail-error").textContent = error.message;
  }
  await player;
  if (current === video.video_id) await showAudit(video.video_id); // after the reads it records
  $("detail").scrollIntoView({ block: "start" });
}

followPlayer(movePlayhead);

$("ids-toggle").addEventListener("change", (event) => {
  document.body.classList.toggle("show-ids", event.target.checked);
});

$("ask-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!current) return;
  $("answer").replaceChildren(el("p", "Asking…"));
  try {
    const path = `/api/product/videos/${encodeURIComponent(current)}/ask`;
    drawAnswer(await postJson(path, { question: $("question").value }));
  } catch (error) {
    $("answer").replaceChildren(el("p", error.message, "error"));
  }
});
