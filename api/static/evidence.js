// The evidence list, grouped by what it is about: one row per thing (an identity's appearances
// together, else one object; scene events in a row of their own) with its spans folded under
// it, and filters by class, event type, verdict and time, each option with the count of spans
// it would leave. Groups are listed a page at a time and a group's spans likewise, so a video
// with thousands of spans builds a few dozen rows. A span's line plays the video from its start
// and opens its frames and review note form (one open at a time).
import { $, el, loadImage, seconds } from "./api.js";
import { spanNotes, verdictBadge } from "./notes.js";
import { onSelect, selectObject, selectedObject, thingOf } from "./selection.js";

const GROUPS_PER_PAGE = 20;
const SPANS_PER_PAGE = 10;
const FACETS = ["class", "type", "verdict"];
const SCENE = "scene";

let state = null; // the open video's evidence: { videoId, spans, graph, onSeek, ... }
let decorate = null; // adds to each span's line as it is drawn (an export's clip link)

/** What a span is about, in fields the filters and groups read. */
function describe(span, graph, events, objects) {
  const event = events.get(span.event_id);
  const objectId = span.object_id || event?.object_id || null;
  const obj = objectId ? objects.get(objectId) : null;
  return {
    span,
    objectId,
    group: objectId ? (obj?.identity_id || objectId) : SCENE,
    class: obj?.class || SCENE,
    type: event?.type || "object",
    verdict: span.verdict || "unreviewed",
    name: span.object_name || obj?.name || SCENE,
  };
}

function thumbnail(frame, alt, className) {
  const img = el("img", undefined, className);
  img.alt = alt;
  loadImage(img, frame.thumbnail_url).catch((error) => { img.alt = error.message; });
  return img;
}

/** A span's raw ids, shown where the page shows ids (the "ids" toggle) and as a tooltip. */
function rawId(text) {
  return el("code", text, "raw-id");
}

function spanHead(row) {
  const { span } = row;
  const head = el("p", undefined, "span-head");
  head.append(
    el("span", `${seconds(span.start_s)} – ${seconds(span.end_s)}`, "span-time"),
    el("span", row.type.replace("_", " "), "span-backs"),
    el("span", `confidence ${span.confidence.toFixed(2)}`, "span-confidence"),
  );
  head.title = [span.evidence_id, span.event_id, span.object_id].filter(Boolean).join(" · ");
  head.append(rawId(span.evidence_id));
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

function spanItem(row) {
  const { span } = row;
  const item = el("li", undefined, "span");
  item.id = `span-${span.evidence_id}`;
  item.dataset.evidenceId = span.evidence_id;
  item.dataset.startS = span.start_s;
  item.dataset.endS = span.end_s;
  if (row.objectId) item.dataset.objectId = row.objectId;
  const head = spanHead(row);
  const badge = verdictBadge(span);
  head.append(badge);
  item.append(head);
  state.badges.set(span.evidence_id, badge);
  if (decorate) decorate(item);
  return item;
}

/** Call `fn(item)` on every span's line drawn now and from now on (null: stop); spans are
 * drawn as their groups open, so what marks them must come back each time. */
export function decorateSpans(fn) {
  decorate = fn;
  if (fn && state) state.list.querySelectorAll("li.span").forEach(fn);
}

function matches(row, filters, except = null) {
  for (const facet of FACETS) {
    if (facet !== except && filters[facet] && row[facet] !== filters[facet]) return false;
  }
  if (filters.from !== null && row.span.end_s < filters.from) return false;
  if (filters.to !== null && row.span.start_s > filters.to) return false;
  return true;
}

function readFilters() {
  const number = (id) => ($(id).value === "" ? null : Number($(id).value));
  const filters = { from: number("ev-from"), to: number("ev-to") };
  for (const facet of FACETS) filters[facet] = $(`ev-${facet}`).value;
  return filters;
}

/** Each facet's options with the number of spans each would leave (the other filters held). */
function fillFacets(filters) {
  for (const facet of FACETS) {
    const counts = new Map();
    let all = 0;
    for (const row of state.rows) {
      if (!matches(row, filters, facet)) continue;
      all += 1;
      counts.set(row[facet], (counts.get(row[facet]) || 0) + 1);
    }
    const select = $(`ev-${facet}`);
    const kept = filters[facet];
    const options = [el("option", `every ${facet} (${all})`)];
    options[0].value = "";
    const known = [...new Set([...state.rows.map((r) => r[facet])])].sort();
    for (const value of known) {
      const option = el("option", `${value.replace("_", " ")} (${counts.get(value) || 0})`);
      option.value = value;
      option.dataset.count = String(counts.get(value) || 0);
      options.push(option);
    }
    options[0].dataset.count = String(all);
    select.replaceChildren(...options);
    select.value = kept;
  }
}

/** The groups the filters leave: [{ key, name, rows }], in order of their first span. */
function groupsOf(filters) {
  const groups = new Map();
  for (const row of state.rows) {
    if (!matches(row, filters)) continue;
    if (!groups.has(row.group)) groups.set(row.group, { key: row.group, name: row.name, rows: [] });
    groups.get(row.group).rows.push(row);
  }
  return [...groups.values()];
}

function groupHead(group) {
  const head = el("p", undefined, "group-head");
  const first = group.rows[0].span;
  const last = Math.max(...group.rows.map((r) => r.span.end_s));
  const reviewed = group.rows.filter((r) => r.verdict !== "unreviewed").length;
  const name = el("strong", group.name, "group-name");
  const ids = [...new Set(group.rows.map((r) => r.objectId).filter(Boolean))];
  name.title = group.key === SCENE ? "events of the whole scene" : [group.key, ...ids].join(" · ");
  const frame = group.rows.map((r) => r.span.frames[0]).find(Boolean);
  head.append(el("span", "▸", "fold"));
  if (frame) head.append(thumbnail(frame, group.name, "mini"));
  head.append(
    name,
    el("span", group.rows[0].class, "group-class"),
    el("span", `${group.rows.length} span${group.rows.length === 1 ? "" : "s"}`, "group-count"),
    el("span", `${seconds(first.start_s)} – ${seconds(last)}`, "group-time"),
    el("span", `${reviewed} reviewed`, "group-reviewed"),
    rawId(group.key === SCENE ? SCENE : [group.key, ...ids.filter((i) => i !== group.key)].join(" ")),
  );
  return head;
}

function fillGroup(item, group) {
  const list = item.querySelector("ol.spans") || el("ol", undefined, "spans");
  const shown = Number(item.dataset.shown || 0);
  const more = Math.min(group.rows.length, Math.max(shown, SPANS_PER_PAGE));
  list.replaceChildren(...group.rows.slice(0, more).map(spanItem));
  item.dataset.shown = String(more);
  item.querySelector(".more-spans")?.remove();
  item.append(list);
  if (more < group.rows.length) {
    const button = el("button", `${group.rows.length - more} more spans`, "more-spans");
    button.type = "button";
    button.addEventListener("click", () => {
      item.dataset.shown = String(more + SPANS_PER_PAGE);
      fillGroup(item, group);
    });
    item.append(button);
  }
}

function openGroup(item, open = true) {
  const group = state.groupByKey.get(item.dataset.group);
  item.classList.toggle("open", open);
  item.querySelector(".fold").textContent = open ? "▾" : "▸";
  if (open && group) fillGroup(item, group);
  if (!open) {
    item.querySelector("ol.spans")?.remove();
    item.querySelector(".more-spans")?.remove();
    delete item.dataset.shown;
  }
}

function groupItem(group) {
  const item = el("li", undefined, "group");
  item.dataset.group = group.key;
  item.dataset.spans = String(group.rows.length);
  item.append(groupHead(group));
  return item;
}

/** List the groups the filters leave, up to `pages` pages of them. */
function render(pages = 1) {
  const filters = readFilters();
  fillFacets(filters);
  const groups = groupsOf(filters);
  state.groups = groups;
  state.groupByKey = new Map(groups.map((g) => [g.key, g]));
  state.pages = pages;
  state.badges = new Map();
  const shown = groups.slice(0, pages * GROUPS_PER_PAGE);
  state.list.replaceChildren(...shown.map(groupItem));
  const spans = groups.reduce((n, g) => n + g.rows.length, 0);
  $("ev-summary").textContent = `${spans} spans about ${groups.length} things`
    + (shown.length < groups.length ? ` (${shown.length} listed)` : "");
  $("ev-summary").dataset.spans = String(spans);
  $("ev-summary").dataset.groups = String(groups.length);
  const more = $("ev-more");
  more.hidden = shown.length >= groups.length;
  more.textContent = `${groups.length - shown.length} more`;
  keepSelection();
}

/** The selected thing's group stays marked and open when the list is drawn again. */
function keepSelection() {
  const chosen = selectedObject();
  if (!chosen) return;
  markSelected(chosen);
  const item = state.list.querySelector("li.group.selected");
  if (item) openGroup(item, true);
}

/** Show the group of `rowOf` (its page and its spans as far as `evidenceId`); its item. */
function reveal(groupKey, evidenceId = null) {
  const at = state.groups.findIndex((g) => g.key === groupKey);
  if (at < 0) return null;
  if (at >= state.pages * GROUPS_PER_PAGE) render(Math.floor(at / GROUPS_PER_PAGE) + 1);
  const item = state.list.querySelector(`li.group[data-group="${CSS.escape(groupKey)}"]`);
  if (!item) return null;
  if (evidenceId) {
    const index = state.groups[at].rows.findIndex((r) => r.span.evidence_id === evidenceId);
    item.dataset.shown = String(Math.max(Number(item.dataset.shown || 0), index + 1));
  }
  if (!item.classList.contains("open") || evidenceId) openGroup(item, true);
  return item;
}

function markSelected(objectId) {
  const thing = objectId ? thingOf(objectId) : null;
  for (const item of state.list.querySelectorAll("li.group")) {
    item.classList.toggle("selected", item.dataset.group === thing);
  }
}

/** Expand the span `evidenceId` (collapsing the one open before); its item, or null. */
export function selectSpan(evidenceId) {
  if (!state) return null;
  const row = state.rows.find((r) => r.span.evidence_id === evidenceId);
  if (!row) return null;
  let item = document.getElementById(`span-${evidenceId}`);
  if (!item) {
    if (!state.groupByKey.has(row.group)) { // filtered out: clear the filters first
      clearFilters();
    }
    reveal(row.group, evidenceId);
    item = document.getElementById(`span-${evidenceId}`);
    if (!item) return null;
  }
  if (item.classList.contains("highlight")) return item; // open already: keep a note being typed
  for (const open of state.list.querySelectorAll("li.span.highlight")) {
    open.classList.remove("highlight");
    open.querySelector(".span-body")?.remove();
  }
  item.classList.add("highlight");
  item.append(spanBody(state.videoId, row.span, state.badges.get(evidenceId)));
  return item;
}

function clearFilters() {
  for (const facet of FACETS) $(`ev-${facet}`).value = "";
  $("ev-from").value = "";
  $("ev-to").value = "";
  render();
}

/** Fill `list` with `spans` of `videoId` (described from `graph`), grouped; the first group
 * open with its first span expanded; a click on a span's line selects it (and its object) and
 * calls `onSeek(its start)`. */
export function drawEvidence(list, videoId, spans, graph, onSeek) {
  const events = new Map(graph.events.map((e) => [e.event_id, e]));
  const objects = new Map(graph.objects.map((o) => [o.object_id, o]));
  const rows = spans.map((span) => describe(span, graph, events, objects));
  state = { list, videoId, rows, onSeek, groups: [], groupByKey: new Map(), pages: 1, badges: new Map() };
  $("ev-from").value = "";
  $("ev-to").value = "";
  for (const facet of FACETS) $(`ev-${facet}`).value = "";
  render();
  const first = state.list.querySelector("li.group");
  if (first) {
    openGroup(first, true);
    const span = first.querySelector("li.span");
    if (span) selectSpan(span.dataset.evidenceId);
  }
}

function onListClick(event) {
  if (!state || event.target.closest("a, form, button")) return;
  const spanHeadHit = event.target.closest(".span-head");
  if (spanHeadHit) {
    const item = spanHeadHit.parentElement;
    selectSpan(item.dataset.evidenceId);
    if (item.dataset.objectId) selectObject(item.dataset.objectId, "evidence");
    state.onSeek(Number(item.dataset.startS));
    return;
  }
  const head = event.target.closest(".group-head");
  if (!head) return;
  const item = head.parentElement;
  const open = !item.classList.contains("open");
  openGroup(item, open);
  const first = state.groupByKey.get(item.dataset.group)?.rows[0];
  if (open && first?.objectId) selectObject(first.objectId, "evidence");
}

$("evidence").addEventListener("click", onListClick);
for (const id of ["ev-class", "ev-type", "ev-verdict", "ev-from", "ev-to"]) {
  $(id).addEventListener("change", () => state && render());
}
$("ev-more").addEventListener("click", () => state && render(state.pages + 1));
$("ev-clear").addEventListener("click", () => state && clearFilters());

// An object selected elsewhere (its box, its lane): mark its group and open it.
onSelect((objectId, source) => {
  if (!state) return;
  markSelected(objectId);
  if (!objectId || source === "evidence") return;
  const item = reveal(thingOf(objectId));
  item?.scrollIntoView({ block: "nearest" });
});
