// The workspace search box: GET /api/product/search?q=... over every video, each hit a link to
// its video's page playing from the hit's time (#video=<id>&t=<start_s>). A question the search
// cannot read answers 422 with what it understood (`interpreted`), shown as it came.
import { $, api, el, loadImage, seconds } from "./api.js";

let nextCursor = null;

/** The dashboard link that opens `videoId`'s page playing from `t` seconds. */
export function videoLink(videoId, t) {
  return `#video=${encodeURIComponent(videoId)}&t=${Number(t).toFixed(2)}`;
}

function matched(hit) {
  // A thing by its name as every page names it; a text by what was read.
  const what = hit.text ? `text '${hit.text}'` : hit.object_name || hit.class || "";
  const parts = [hit.event_type, what, hit.zones?.length ? `in ${hit.zones.join(", ")}` : ""];
  return parts.filter(Boolean).join(" · ");
}

function hitItem(hit) {
  const item = el("li", undefined, "hit");
  item.dataset.hitId = hit.hit_id;
  const img = el("img");
  img.alt = hit.thumbnail_url ? `${hit.title} at ${seconds(hit.start_s)}` : "no thumbnail";
  if (hit.thumbnail_url) loadImage(img, hit.thumbnail_url).catch((e) => { img.alt = e.message; });
  const link = el("a", hit.title, "hit-link");
  link.href = videoLink(hit.video_id, hit.start_s);
  link.dataset.videoId = hit.video_id;
  link.dataset.startS = hit.start_s;
  link.addEventListener("click", () => {
    // The same link twice changes no hash: open it again all the same.
    if (window.location.hash === link.getAttribute("href")) {
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    }
  });
  const what = el("span", matched(hit), "hit-what");
  what.title = [hit.class, hit.object_id, hit.event_id].filter(Boolean).join(" · ");
  item.append(
    img, link, what, el("code", hit.object_id || hit.event_id || "", "raw-id"),
    el("span", `${seconds(hit.start_s)} – ${seconds(hit.end_s)}`),
    el("span", `confidence ${Number(hit.confidence).toFixed(2)}`),
  );
  return item;
}

function showInterpreted(interpreted, searched) {
  const parts = [];
  if (interpreted) parts.push(`understood: ${JSON.stringify(interpreted)}`);
  if (searched) parts.push(`searched ${searched.runs} runs of ${searched.videos} videos`);
  $("search-interpreted").textContent = parts.join(" · ");
}

async function search(append) {
  const params = new URLSearchParams({ q: $("search-q").value });
  if (append && nextCursor) params.set("cursor", nextCursor);
  $("search-error").textContent = "";
  try {
    const page = await api(`/api/product/search?${params}`);
    if (!append) $("search-hits").replaceChildren();
    $("search-hits").append(...page.data.map(hitItem));
    if (!append && !page.data.length) $("search-hits").append(el("li", "Nothing found."));
    showInterpreted(page.interpreted, page.searched);
    nextCursor = page.next_cursor;
  } catch (error) {
    $("search-hits").replaceChildren();
    $("search-error").textContent = error.message;
    showInterpreted(error.problem?.interpreted, null);
    nextCursor = null;
  }
  $("search-more").hidden = !nextCursor;
}

$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  search(false);
});

$("search-more").addEventListener("click", () => search(true));
