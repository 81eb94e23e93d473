// The service worker that makes the page work offline after its first load: every file of this folder it serves
// once goes into a cache named after the build, and comes from there afterwards (a new build: a new cache).
const CACHE = "tx-web-__BUILD__";
const SHELL = __SHELL__; // the page's own files (web/build.py writes the list): the first visit loads them before
// this worker controls the page, so they are stored at install; the rest is stored as the page fetches it

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n.startsWith("tx-web-") && n !== CACHE).map((n) => caches.delete(n))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const cached = await cache.match(event.request, { ignoreSearch: true });
    if (cached) return cached;
    const response = await fetch(event.request);
    // stored while the page reads its own copy, so the page's progress is the download's
    if (response.ok) event.waitUntil(cache.put(event.request, response.clone()));
    return response;
  })());
});
