// The viewer's service worker: keeps the viewer's own files and pdf.js so that the viewer opens
// without the server (offline edits are kept in IndexedDB and pushed when the server is back).
// Network first: a server that answers always serves the current files; the copies are only for
// when it does not. It never touches the API's requests.

const CACHE = 'openinstant-viewer-1';
const SHELL = [
  '/viewer',
  '/viewer/viewer.css',
  '/viewer/icon.svg',
  '/viewer/viewer.js',
  '/viewer/boot.js',
  '/viewer/instant-client.js',
  '/viewer/client-store.js',
  '/viewer/pdf-pages.js',
  '/viewer/annotation-drawing.js',
  '/viewer/tools.js',
  '/viewer/comments.js',
  '/viewer/pdf-cache.js',
  '/viewer/pdfjs/build/pdf.js',
  '/viewer/pdfjs/build/pdf.worker.js',
];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => Promise.all(SHELL.map((url) => cache.add(url).catch(() => undefined))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

/** Whether a request is for one of the viewer's files (its page, scripts, styles, pdf.js). */
function isViewerFile(request) {
  if (request.method !== 'GET') return false;
  const url = new URL(request.url);
  return url.origin === self.location.origin && (url.pathname === '/viewer' || url.pathname.startsWith('/viewer/'));
}

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(request, response.clone());
    return response;
  } catch (error) {
    const copy = await cache.match(request, { ignoreSearch: true });
    if (copy) return copy;
    throw error;
  }
}

self.addEventListener('fetch', (event) => {
  if (isViewerFile(event.request)) event.respondWith(networkFirst(event.request));
});
