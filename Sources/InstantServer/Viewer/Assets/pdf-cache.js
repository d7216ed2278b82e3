// Opens a document's PDF with pdf.js: from the server with range requests (the first page shows
// before the whole file has arrived), else, when the server cannot be reached, from the copy the
// viewer keeps in IndexedDB of the last documents it showed. Documents never change, so a copy is
// good as long as the server has the document.

const DATABASE = 'openinstant-pdfs';
const STORE = 'pdfs';
/** How many documents' PDFs the viewer keeps for offline use (the least recently opened go first). */
const KEPT = 10;

function openDatabase() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'documentId' });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function done(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function cachedCopy(documentId) {
  const database = await openDatabase();
  try {
    return await done(database.transaction(STORE).objectStore(STORE).get(documentId));
  } finally {
    database.close();
  }
}

/** Keeps the PDF's bytes for offline use, dropping the least recently opened beyond {@link KEPT}. */
async function keepCopy(documentId, fingerprint, bytes) {
  const database = await openDatabase();
  try {
    const transaction = database.transaction(STORE, 'readwrite');
    const store = transaction.objectStore(STORE);
    const existing = await done(store.get(documentId));
    if (existing?.fingerprint === fingerprint) {
      store.put({ ...existing, openedAt: Date.now() });
    } else {
      store.put({ documentId, fingerprint, bytes: new Blob([bytes]), openedAt: Date.now() });
    }
    const all = await done(store.getAll());
    all.sort((a, b) => b.openedAt - a.openedAt);
    for (const old of all.slice(KEPT)) store.delete(old.documentId);
    await new Promise((resolve, reject) => {
      transaction.oncomplete = resolve;
      transaction.onabort = () => reject(transaction.error);
    });
  } finally {
    database.close();
  }
}

/** The options of every document pdf.js opens for the viewer. */
function documentOptions() {
  return {
    isEvalSupported: false,
    standardFontDataUrl: '/viewer/pdfjs/web/standard_fonts/',
    cMapUrl: '/viewer/pdfjs/web/cmaps/',
    cMapPacked: true,
    rangeChunkSize: 256 * 1024,
  };
}

/** An error of the PDF's download, with the server's status and reason. */
class DownloadError extends Error {
  constructor(status, reason) {
    super(reason);
    this.status = status;
  }
}

/**
 * Feeds pdf.js a PDF the viewer downloads itself: the whole file streams in from the request
 * started before pdf.js's worker was ready (pdf.js reads a flat page tree's every page before
 * the first page, so the whole file is needed soon), and pdf.js fetches the ranges it needs before
 * the stream gets to them.
 */
function streamIntoPDFJS(pdfjs, source, response, length) {
  class ServerTransport extends pdfjs.PDFDataRangeTransport {
    requestDataRange(begin, end) {
      fetch(source.url, { headers: { Authorization: source.authorization, Range: `bytes=${begin}-${end - 1}` } })
        .then((answer) => {
          if (answer.status !== 206) throw new DownloadError(answer.status, 'The server sent no range.');
          return answer.arrayBuffer();
        })
        .then((buffer) => this.onDataRange(begin, new Uint8Array(buffer)))
        // The stream brings the same bytes; pdf.js asks again for what it still lacks.
        .catch(() => {});
    }
  }
  const transport = new ServerTransport(length, null);
  (async () => {
    const reader = response.body.getReader();
    let loaded = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      loaded += value.byteLength;
      transport.onDataProgressiveRead(value);
      transport.onDataProgress(loaded, length);
    }
    transport.onDataProgressiveDone();
  })().catch(() => {
    // A cut stream: pdf.js fetches what is missing by ranges.
  });
  return transport;
}

/**
 * The document's PDF, from the server or, when that fails, from the copy kept offline.
 * @param {object} pdfjs the pdf.js library.
 * @param {{documentId: string, url: string, authorization: string}} source the document, the URL
 *   of its PDF on a layer's routes and the `Authorization` header with a token for that layer.
 * @param {?Promise<Response>} started the answer of a download started earlier, if any.
 * @returns {Promise<{pdf: object, offline: boolean}>}
 */
export async function openPDF(pdfjs, source, started = null) {
  let response;
  try {
    response = await (started ?? startDownload(source));
  } catch (error) {
    const copy = await cachedCopy(source.documentId).catch(() => null);
    if (!copy) throw error;
    const data = new Uint8Array(await copy.bytes.arrayBuffer());
    const pdf = await pdfjs.getDocument({ ...documentOptions(), data }).promise;
    return { pdf, offline: true };
  }
  const length = Number(response.headers.get('Content-Length'));
  const task =
    Number.isSafeInteger(length) && length > 0 && !response.headers.get('Content-Encoding')
      ? pdfjs.getDocument({ ...documentOptions(), range: streamIntoPDFJS(pdfjs, source, response, length) })
      : pdfjs.getDocument({ ...documentOptions(), url: source.url, httpHeaders: { Authorization: source.authorization } });
  return { pdf: await task.promise, offline: false };
}

/**
 * Starts downloading a document's PDF; resolves with the answer once its headers arrived, rejects
 * with a {@link DownloadError} (its `status`) when the server refuses, or a `TypeError` when it
 * cannot be reached.
 */
async function startDownload(source) {
  const response = await fetch(source.url, { headers: { Authorization: source.authorization } });
  if (response.ok) return response;
  let reason = `The server answered ${response.status}.`;
  try {
    reason = (await response.json()).error.reason ?? reason;
  } catch {
    // Not the server's JSON error: the status says it.
  }
  throw new DownloadError(response.status, reason);
}

/** Keeps a copy of an opened PDF for offline use once all of it has arrived (in the background). */
export async function keepForOffline(pdf, documentId) {
  const bytes = await pdf.getData();
  await keepCopy(documentId, pdf.fingerprints?.[0] ?? '', bytes);
}
