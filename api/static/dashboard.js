// The workspace page. The key lives in sessionStorage (this tab only), never in a URL; every
// value that comes from users (titles, URLs) is written with textContent, never as HTML.
"use strict";

const KEY = "ves.apiKey";
const $ = (id) => document.getElementById(id);
// `?video=<id>` (a demo workspace's dashboard_url) marks that video's row; the URL holds no key.
const focusVideo = new URLSearchParams(window.location.search).get("video");
let nextCursor = null;

async function api(path, options = {}) {
  const headers = { Authorization: `Bearer ${sessionStorage.getItem(KEY)}`, ...(options.headers || {}) };
  const response = await fetch(path, { ...options, headers });
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (!response.ok) {
    const error = new Error(body?.detail || `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text ?? "";
  if (className) td.className = className;
  return td;
}

function renderVideo(video) {
  const row = $("videos").insertRow();
  row.dataset.videoId = video.video_id;
  if (video.video_id === focusVideo) row.classList.add("focused");
  cell(row, video.title);
  cell(row, video.source.url || `upload (${video.source.type})`, "url");
  const state = document.createElement("span");
  state.className = `state ${video.state}`;
  state.textContent = video.state;
  cell(row, "").appendChild(state);
  const run = video.latest_run;
  cell(row, run ? `${Math.round(run.progress * 100)}% ${run.stage || ""}` : "—");
  cell(row, new Date(video.created_at).toLocaleString());
}

async function loadVideos(append = false) {
  const query = append && nextCursor ? `?cursor=${encodeURIComponent(nextCursor)}` : "";
  const page = await api(`/api/product/videos${query}`);
  if (!append) $("videos").replaceChildren();
  page.data.forEach(renderVideo);
  nextCursor = page.next_cursor;
  $("more").hidden = !nextCursor;
}

function show(signedIn) {
  $("sign-in").hidden = signedIn;
  $("workspace").hidden = !signedIn;
  $("sign-out").hidden = !signedIn;
}

async function enter() {
  try {
    await loadVideos();
    show(true);
  } catch (error) {
    sessionStorage.removeItem(KEY);
    show(false);
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
  show(false);
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
    await loadVideos();
  } catch (error) {
    $("add-error").textContent = error.message;
  }
});

$("more").addEventListener("click", () => loadVideos(true));

if (sessionStorage.getItem(KEY)) enter(); else show(false);
setInterval(() => { if (sessionStorage.getItem(KEY) && !document.hidden) loadVideos(); }, 5000);
