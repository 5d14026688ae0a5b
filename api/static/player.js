// The open video's player: an HTML5 <video> over the stored upload (a signed URL from
// GET .../media-url, since a <video> cannot send the Bearer key) or over the HLS playlist where
// the browser plays HLS itself. Everything that has a time (timeline, evidence, search hits,
// a #video=...&t=... link) seeks it through seekTo.
import { $, api, el } from "./api.js";

const HLS = "application/vnd.apple.mpegurl";
let pending = null; // a time asked for before the video could seek
let loading = null; // the video whose source is being asked for
let renewed = false; // whether this video's URL was asked for again after an error

function player() {
  return $("player");
}

function say(text) {
  $("player-note").textContent = text;
}

/** Load `videoId`'s source into the player; say why when there is nothing it can play. */
export async function loadPlayer(videoId, renewal = false) {
  const video = player();
  renewed = renewal;
  video.removeAttribute("src");
  video.load();
  video.hidden = true;
  delete video.dataset.kind;
  say("");
  loading = videoId;
  let media;
  try {
    media = await api(`/api/product/videos/${encodeURIComponent(videoId)}/media-url`);
    if (loading !== videoId) return; // another video opened meanwhile
  } catch (error) {
    if (loading !== videoId) return;
    say(`Nothing to play: ${error.message}.`);
    return;
  }
  if (media.kind === "hls" && !video.canPlayType(HLS)) {
    say("This browser cannot play HLS itself (Safari and Chromium since 2025 can; Firefox "
      + "cannot), and the service keeps no copy of a stream. The playlist: ");
    $("player-note").append(el("code", media.url));
    return;
  }
  video.dataset.kind = media.kind;
  video.src = media.url;
  video.hidden = false;
  if (pending !== null) seekTo(pending);
}

function play(video) {
  video.play().catch((error) => {
    // Only a refusal for want of a user gesture (a followed link) is retried, muted, as browsers
    // allow; a play() cut short by a pause (AbortError) is the user's pause and stands.
    if (error?.name !== "NotAllowedError") return;
    video.muted = true;
    video.play().catch(() => undefined);
  });
}

/** Seek the player to `t` seconds and play from there (once it can, if it is still loading). */
export function seekTo(t) {
  const video = player();
  if (!video.src) {
    pending = t;
    return;
  }
  pending = null;
  const go = () => {
    video.currentTime = Math.max(0, Math.min(t, video.duration || t));
    play(video);
  };
  if (video.readyState >= HTMLMediaElement.HAVE_METADATA) go();
  else video.addEventListener("loadedmetadata", go, { once: true });
}

/** Call `onTime(t)` as the player moves (the timeline's playhead follows it). */
export function followPlayer(onTime) {
  const video = player();
  for (const name of ["timeupdate", "seeked"]) {
    video.addEventListener(name, () => onTime(video.currentTime));
  }
}

// A signed URL stops working after an hour: on an error, ask for a new one once and go on
// from the same time; a second error is the file's own, and is said.
player().addEventListener("error", () => {
  const video = player();
  if (!video.getAttribute("src")) return; // emptied on purpose (another video)
  if (["stored", "review"].includes(video.dataset.kind) && !renewed && loading) {
    const at = video.currentTime;
    loadPlayer(loading, true).then(() => seekTo(at));
    return;
  }
  say(`The browser cannot play this video: ${video.error?.message || "unsupported format"}.`);
});

/** Forget the open video's pending seek (another video opened). */
export function resetPlayer() {
  pending = null;
}
