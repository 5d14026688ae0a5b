// The open video's evidence spans, one line each (time, what it backs, confidence, verdict, a
// small thumbnail); the selected span is expanded with its frames, its review notes and the one
// note form on the page. Selecting a span by a click seeks the player to its start.
import { el, loadImage, seconds } from "./api.js";
import { spanNotes, verdictBadge } from "./notes.js";

const drawn = new Map(); // evidence id -> { videoId, span, badge } of the spans listed

/** What a span backs, in words: "appear · person", "text_seen · text 'GATE 7'". */
function backs(span, graph) {
  const obj = graph.objects.find((o) => o.object_id === span.object_id);
  const event = graph.events.find((e) => e.event_id === span.event_id);
  const what = obj ? `${obj.class}${obj.attributes?.text ? ` '${obj.attributes.text}'` : ""}` : "";
  return [event?.type, what].filter(Boolean).join(" · ") || "scene";
}

function thumbnail(frame, alt, className) {
  const img = el("img", undefined, className);
  img.alt = alt;
  loadImage(img, frame.thumbnail_url).catch((error) => { img.alt = error.message; });
  return img;
}

function spanHead(span, graph) {
  const head = el("p", undefined, "span-head");
  if (span.frames[0]) head.append(thumbnail(span.frames[0], span.evidence_id, "mini"));
  head.append(
    el("span", `${seconds(span.start_s)} – ${seconds(span.end_s)}`, "span-time"),
    el("span", backs(span, graph), "span-backs"),
    el("span", `confidence ${span.confidence.toFixed(2)}`, "span-confidence"),
    el("strong", span.evidence_id, "span-id"),
  );
  return head;
}

// The expanded part of a span: every frame, the notes and the form.
function spanBody(videoId, span, badge) {
  const body = el("div", undefined, "span-body");
  const thumbs = el("div", undefined, "thumbs");
  for (const frame of span.frames) {
    thumbs.append(thumbnail(frame, `${span.evidence_id} at ${seconds(frame.t_s)}`));
  }
  const { list, form } = spanNotes(videoId, span, badge);
  body.append(thumbs, list, form);
  return body;
}

function spanItem(videoId, span, graph) {
  const item = el("li", undefined, "span");
  item.id = `span-${span.evidence_id}`;
  item.dataset.evidenceId = span.evidence_id;
  item.dataset.startS = span.start_s;
  item.dataset.endS = span.end_s;
  const head = spanHead(span, graph);
  const badge = verdictBadge(span);
  head.append(badge);
  item.append(head);
  drawn.set(span.evidence_id, { videoId, span, badge });
  return item;
}

/** Expand the span `evidenceId` (collapsing the one open before); its item, or null. */
export function selectSpan(evidenceId) {
  const item = document.getElementById(`span-${evidenceId}`);
  const shown = drawn.get(evidenceId);
  if (!item || !shown) return null;
  if (item.classList.contains("highlight")) return item; // open already: keep a note being typed
  for (const open of document.querySelectorAll("#evidence li.highlight")) {
    open.classList.remove("highlight");
    open.querySelector(".span-body")?.remove();
  }
  item.classList.add("highlight");
  item.append(spanBody(shown.videoId, shown.span, shown.badge));
  return item;
}

/** Fill `list` with `spans` of `videoId` (described from `graph`), the first one expanded; a
 * click on a span's line selects it and calls `onSeek(its start)`. */
export function drawEvidence(list, videoId, spans, graph, onSeek) {
  drawn.clear();
  list.replaceChildren(...spans.map((span) => spanItem(videoId, span, graph)));
  list.onclick = (event) => {
    const head = event.target.closest(".span-head");
    if (!head || event.target.closest("a")) return;
    const item = head.parentElement;
    selectSpan(item.dataset.evidenceId);
    onSeek(Number(item.dataset.startS));
  };
  if (spans.length) selectSpan(spans[0].evidence_id);
}
