// The workspace page (an ES module; its parts are the sibling modules). The key lives in
// sessionStorage (this tab only), never in a URL; every value that comes from users (titles, URLs,
// OCR texts, answers) is written with textContent or DOM APIs, never parsed as HTML.
import { $, KEY, api, el } from "./api.js";
import { loadBilling } from "./billing.js";
import "./search.js";
import { openVideo } from "./video.js";

// `?video=<id>` (a demo workspace's dashboard_url) marks that video's row; the URL holds no key.
// `#video=<id>&t=<seconds>` (a search hit) opens that video's page playing from that time.
const focusVideo = new URLSearchParams(window.location.search).get("video");
const BUSY = new Set(["queued", "running"]);
const POLL_MS = 2000;
let nextCursor = null;
let selected = null;
let pollTimer = null;
const shown = new Map();

async function execute(video, button) {
  button.disabled = true;
  $("list-error").textContent = "";
  try {
    await api(`/api/product/videos/${encodeURIComponent(video.video_id)}/execute`, { method: "POST" });
  } catch (error) {
    $("list-error").textContent = `${video.title}: ${error.message}`;
  }
  await refresh();
}

function renderVideo(video) {
  shown.set(video.video_id, video);
  const row = $("videos").insertRow();
  row.dataset.videoId = video.video_id;
  row.classList.toggle("focused", video.video_id === focusVideo);
  row.classList.toggle("selected", video.video_id === selected);
  const run = video.latest_run;
  const progress = run ? `${Math.round(run.progress * 100)}% ${run.stage || ""}` : "—";
  const cells = [
    el("span", video.title), el("span", video.source.url || `upload (${video.source.type})`),
    el("span", video.state, `state ${video.state}`), el("span", progress),
    el("span", new Date(video.created_at).toLocaleString()),
  ];
  cells.forEach((node) => row.insertCell().append(node));
  row.cells[1].className = "url";
  if (run?.error) row.cells[3].append(el("span", ` ${run.error.message}`, "error"));
  const button = el("button", "Execute", "execute");
  button.type = "button";
  button.disabled = BUSY.has(video.state) || video.state === "awaiting_upload";
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    execute(video, button);
  });
  row.insertCell().append(button);
  row.addEventListener("click", () => select(video.video_id));
}

function select(videoId, t = null) {
  selected = videoId;
  for (const row of $("videos").rows) row.classList.toggle("selected", row.dataset.videoId === videoId);
  return openVideo(shown.get(videoId), t);
}

// The video and time a `#video=...&t=...` link names; one not listed yet is asked for.
async function openLinked() {
  const linked = new URLSearchParams(window.location.hash.slice(1));
  const videoId = linked.get("video");
  if (!videoId || !sessionStorage.getItem(KEY)) return;
  const t = linked.has("t") ? Number(linked.get("t")) : null;
  try {
    if (!shown.has(videoId)) {
      shown.set(videoId, await api(`/api/product/videos/${encodeURIComponent(videoId)}`));
    }
    show("workspace");
    await select(videoId, Number.isFinite(t) ? t : null);
  } catch (error) {
    $("list-error").textContent = `${videoId}: ${error.message}`;
  }
}

async function loadVideos(append = false) {
  const query = append && nextCursor ? `?cursor=${encodeURIComponent(nextCursor)}` : "";
  const page = await api(`/api/product/videos${query}`);
  if (!append) {
    $("videos").replaceChildren();
    shown.clear();
  }
  page.data.forEach(renderVideo);
  nextCursor = page.next_cursor;
  $("more").hidden = !nextCursor;
}

// Refresh every 2 s while any listed run is queued or running, and stop once all have ended.
// A key revoked meanwhile signs out at once: polling on with it would count as failed
// authentication from this address, and past the limit every key from here answers 429.
async function refresh() {
  clearTimeout(pollTimer);
  try {
    await loadVideos();
  } catch (error) {
    if (error.status === 401) {
      sessionStorage.removeItem(KEY);
      show("sign-in");
      $("sign-in-error").textContent = "That key is no longer valid.";
      return;
    }
    $("list-error").textContent = error.message;
  }
  const busy = [...shown.values()].some((v) => BUSY.has(v.state));
  if (busy && sessionStorage.getItem(KEY)) pollTimer = setTimeout(refresh, POLL_MS);
}

function show(view) {
  $("sign-in").hidden = view !== "sign-in";
  $("workspace").hidden = view !== "workspace";
  $("billing").hidden = view !== "billing";
  $("nav").hidden = view === "sign-in";
}

async function enter() {
  try {
    await loadVideos();
    show("workspace");
    refresh();
    openLinked();
  } catch (error) {
    sessionStorage.removeItem(KEY);
    show("sign-in");
    $("sign-in-error").textContent = error.status === 401 ? "That key is not valid." : error.message;
  }
}

$("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(KEY, $("key").value.trim());
  $("key").value = "";
  enter();
});

$("sign-out").addEventListener("click", () => {
  sessionStorage.removeItem(KEY);
  clearTimeout(pollTimer);
  $("detail").hidden = true;
  show("sign-in");
});

$("show-videos").addEventListener("click", () => {
  show("workspace");
  refresh();
});

$("show-billing").addEventListener("click", () => {
  show("billing");
  loadBilling();
});

$("add-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("add-error").textContent = "";
  try {
    await api("/api/videos/add", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ title: $("add-title").value, url: $("add-url").value }),
    });
    event.target.reset();
    await refresh();
  } catch (error) {
    $("add-error").textContent = error.message;
  }
});

$("more").addEventListener("click", () => loadVideos(true));

window.addEventListener("hashchange", openLinked);

if (sessionStorage.getItem(KEY)) enter(); else show("sign-in");
