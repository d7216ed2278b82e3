// The viewer page (`/viewer#jwt=<token>`): opens the layer the token is for, draws the PDF and its
// annotations, and wires the tools, the comment panel, presence and the sync state. Embedded by an
// app (embed.js), it talks to the app with window messages: see docs/VIEWER.md.

import { InstantClient, tokenClaims } from './instant-client.js';
import { PDFPages } from './pdf-pages.js';
import { AnnotationLayer } from './annotation-drawing.js';
import { Tools } from './tools.js';
import { Sidebar } from './comments.js';
import { openPDF, keepForOffline } from './pdf-cache.js';

/** What the sync state indicator says for each state. */
const STATE_LABELS = {
  clean: 'All changes saved',
  pending: 'Changes pending',
  sending: 'Sending changes…',
  receiving: 'Receiving changes…',
  offline: 'Offline: changes are kept',
  tokenExpired: 'Token expired',
  error: 'Not syncing',
};

function showMessage(text) {
  const message = document.getElementById('message');
  message.textContent = text;
  message.hidden = false;
}

function hideMessage() {
  document.getElementById('message').hidden = true;
}

/** Resolves once the client's state is one of `states`. */
function stateReached(client, states) {
  if (states.includes(client.state)) return Promise.resolve();
  return new Promise((resolve) => {
    const listener = () => {
      if (!states.includes(client.state)) return;
      client.removeEventListener('state', listener);
      resolve();
    };
    client.addEventListener('state', listener);
  });
}

/** What openPDF needs of a client: its document, the URL of its PDF and its token. */
function pdfSource(client) {
  return { documentId: client.documentId, url: client.url('pdf').href, authorization: client.authorization };
}

/**
 * Opens the PDF, from the server or the offline copy; when neither can (the token was refused,
 * or the server cannot be reached and there is no copy), waits for a new token or for the server
 * and tries again. A PDF the server refuses otherwise (404) or pdf.js cannot read is given up on.
 * @param {Promise} first the first attempt, started before the client was open.
 */
async function openWhenPossible(pdfjs, client, first) {
  let attempt = first;
  for (;;) {
    try {
      const opened = await attempt;
      hideMessage();
      return opened;
    } catch (error) {
      const status = error?.status;
      // Only a server that cannot be reached or fails (5xx) may do better later, or a new token.
      const retryable = error instanceof TypeError || status >= 500 || status === 408 || status === 429;
      if (status !== 401 && status !== 403 && !retryable) throw error;
      if (status === 401 || status === 403) {
        showMessage('The token was refused; waiting for a new one…');
        await client.renewToken();
        attempt = openPDF(pdfjs, pdfSource(client));
        continue;
      }
      showMessage(`The PDF cannot be downloaded yet (${error?.message ?? error}); trying again when the server answers…`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await stateReached(client, ['clean', 'pending']);
    }
    attempt = openPDF(pdfjs, pdfSource(client));
  }
}

/**
 * The viewer's side of the window messages with the app that embeds it (embed.js): only with the
 * parent window, and only with the origin the app gave in `parentOrigin`.
 */
class EmbeddingBridge {
  #origin;
  #waiting = [];

  constructor(parentOrigin) {
    this.embedded = window.parent !== window && typeof parentOrigin === 'string' && /^https?:\/\/[^/]+$/.test(parentOrigin);
    this.#origin = this.embedded ? parentOrigin : null;
    /** Called with each token the app sends without being asked. */
    this.onToken = null;
    if (!this.embedded) return;
    window.addEventListener('message', (event) => {
      if (event.source !== window.parent || event.origin !== this.#origin) return;
      const data = event.data;
      if (data?.type !== 'openinstant:token' || typeof data.jwt !== 'string') return;
      const waiting = this.#waiting;
      this.#waiting = [];
      if (waiting.length > 0) for (const resolve of waiting) resolve(data.jwt);
      else this.onToken?.(data.jwt);
    });
  }

  /** Sends a message to the app. */
  post(message) {
    if (this.embedded) window.parent.postMessage(message, this.#origin);
  }

  /** Asks the app for a new token and waits for it; fails after 30 seconds without an answer. */
  requestToken() {
    this.post({ type: 'openinstant:token-expired' });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting = this.#waiting.filter((entry) => entry !== answered);
        reject(new Error('the app did not answer within 30 s'));
      }, 30000);
      const answered = (jwt) => {
        clearTimeout(timer);
        resolve(jwt);
      };
      this.#waiting.push(answered);
    });
  }
}

function bindSyncState(client, bridge) {
  const indicator = document.getElementById('sync-state');
  const show = () => {
    const state = client.state;
    indicator.dataset.state = state;
    document.body.dataset.syncState = state;
    indicator.textContent = STATE_LABELS[state] ?? state;
    indicator.title = client.lastError ?? '';
    bridge.post({ type: 'openinstant:state', state, reason: client.lastError });
  };
  client.addEventListener('state', show);
  show();
}

function bindPresence(client) {
  const list = document.getElementById('presence');
  client.addEventListener('presence', (event) => {
    list.replaceChildren(
      ...event.detail.users.map((user) => {
        const entry = document.createElement('li');
        const name = user.userId ?? 'anonymous';
        entry.dataset.userId = name;
        entry.textContent = user.connections > 1 ? `${name} ×${user.connections}` : name;
        entry.title = `${name}: ${user.connections} open connection${user.connections === 1 ? '' : 's'}`;
        if (user.userId === client.userId) entry.classList.add('me');
        return entry;
      }),
    );
  });
}

function bindToolbar(tools, pages) {
  const colorInput = document.getElementById('tool-color');
  const widthInput = document.getElementById('tool-width');
  const buttons = document.querySelectorAll('[data-tool]');
  const showTool = () => {
    for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.tool === tools.tool));
    const settings = tools.settings[tools.tool];
    colorInput.disabled = !settings;
    widthInput.disabled = !settings || settings.width === 0;
    if (settings) {
      colorInput.value = settings.color;
      widthInput.value = String(settings.width || 1);
    }
  };
  for (const button of buttons) {
    if (button.tagName === 'BUTTON') button.addEventListener('click', () => tools.setTool(button.dataset.tool));
  }
  tools.addEventListener('tool', showTool);
  colorInput.addEventListener('input', () => {
    if (tools.settings[tools.tool]) tools.settings[tools.tool].color = colorInput.value;
  });
  widthInput.addEventListener('input', () => {
    if (tools.settings[tools.tool]) tools.settings[tools.tool].width = Number(widthInput.value);
  });
  showTool();
  const level = document.getElementById('zoom-level');
  const showZoom = () => {
    level.textContent = `${Math.round(pages.zoom * 100)} %`;
  };
  pages.addEventListener('zoom', showZoom);
  document.getElementById('zoom-in').addEventListener('click', () => pages.setZoom(pages.zoom * 1.25));
  document.getElementById('zoom-out').addEventListener('click', () => pages.setZoom(pages.zoom / 1.25));
  document.getElementById('fit-width').addEventListener('click', () => pages.fitWidth());
  showZoom();
}

async function main() {
  const parameters = new URLSearchParams(location.hash.slice(1));
  const bridge = new EmbeddingBridge(parameters.get('parentOrigin'));
  const jwt = parameters.get('jwt');
  if (!jwt) {
    showMessage('This page needs a token: open it as /viewer#jwt=<token>, or embed it with /viewer/embed.js (see docs/VIEWER.md).');
    return;
  }
  let claims;
  try {
    claims = tokenClaims(jwt);
  } catch (error) {
    showMessage(`The token cannot be read: ${error.message}`);
    return;
  }
  navigator.serviceWorker?.register('/viewer/service-worker.js', { scope: '/viewer' }).catch(() => {});
  const pdfjs = globalThis.pdfjsLib;
  if (!pdfjs) {
    const answer = await fetch('/viewer/pdfjs/build/pdf.js', { method: 'GET' }).catch(() => null);
    const reason = answer ? (await answer.json().catch(() => null))?.error?.reason : null;
    showMessage(reason ?? 'pdf.js did not load: the server must have Debian\'s libjs-pdf package (apt-get install libjs-pdf), or be started with --pdfjs-dir.');
    return;
  }
  pdfjs.GlobalWorkerOptions.workerSrc = '/viewer/pdfjs/build/pdf.worker.js';
  // The worker boot.js started while the page loaded.
  if (globalThis.openInstantPDFWorker) pdfjs.GlobalWorkerOptions.workerPort = globalThis.openInstantPDFWorker;
  // The PDF's download starts at once, while the client opens its local store.
  const firstAttempt = openPDF(pdfjs, {
    documentId: claims.document_id,
    url: new URL(`${InstantClient.layerPath(claims.document_id, claims.layer ?? '')}/pdf`, location.origin).href,
    authorization: `Token token="${jwt}"`,
  });
  firstAttempt.catch(() => {});
  const listen = ['websocket', 'long-poll'].includes(parameters.get('listen')) ? parameters.get('listen') : 'auto';
  const client = await InstantClient.open({
    jwt,
    listen,
    onTokenExpired: bridge.embedded ? () => bridge.requestToken() : undefined,
  });
  performance.mark('openinstant-client-open');
  bridge.onToken = (token) => client.setToken(token);
  window.addEventListener('hashchange', () => {
    const token = new URLSearchParams(location.hash.slice(1)).get('jwt');
    if (token && token !== client.jwt) client.setToken(token);
  });
  bindSyncState(client, bridge);
  bindPresence(client);

  let opened;
  try {
    opened = await openWhenPossible(pdfjs, client, firstAttempt);
  } catch (error) {
    showMessage(`The PDF could not be opened: ${error.message ?? error}`);
    return;
  }
  performance.mark('openinstant-pdf-open');
  const scroller = document.getElementById('scroller');
  const pages = new PDFPages(scroller, opened.pdf, pdfjs);
  const layer = new AnnotationLayer(pages, client);
  const zoom = Number(parameters.get('zoom'));
  await pages.open(zoom > 0 ? zoom : 'page-width');
  performance.mark('openinstant-first-page');
  document.body.dataset.ready = 'true';
  const tools = new Tools(pages, client, layer);
  new Sidebar(document.getElementById('sidebar'), client, tools, pages);
  bindToolbar(tools, pages);
  bridge.post({ type: 'openinstant:ready', documentId: client.documentId, layer: client.layer });
  if (opened.offline) {
    document.body.dataset.offlineCopy = 'true';
  } else {
    keepForOffline(opened.pdf, client.documentId)
      .then(() => {
        document.body.dataset.offlineCopy = 'true';
      })
      .catch(() => {});
  }
}

main().catch((error) => showMessage(`The viewer stopped: ${error.message ?? error}`));
