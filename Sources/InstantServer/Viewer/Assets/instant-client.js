// A JavaScript client of the OpenInstant sync protocol (docs/PROTOCOL.md), for browsers: it keeps a
// layer's records and the user's pending changes in IndexedDB, pushes them exactly once, listens for
// changes by WebSocket (or long-poll where WebSockets do not get through) and asks the app for a new
// token when the server refuses the one it has. It does not need the viewer:
//
//   import { InstantClient } from '/viewer/instant-client.js';
//   const client = await InstantClient.open({ jwt, onTokenExpired: () => myBackend.newToken() });
//   client.addEventListener('change', (event) => redraw(event.detail.ids));
//   await client.put('annotation', newRecordId(), { v: 2, type: 'pspdfkit/note', ... });

import { ClientStore, randomHex } from './client-store.js';

/** The states of a client, as `client.state` and the `state` event say. */
export const SyncState = Object.freeze({
  /** Everything the user did is on the server, and the client has what the server had. */
  clean: 'clean',
  /** Local changes wait to be pushed. */
  pending: 'pending',
  /** A push is on its way. */
  sending: 'sending',
  /** The client is fetching what changed on the server. */
  receiving: 'receiving',
  /** The server cannot be reached; changes are kept and pushed when it can. */
  offline: 'offline',
  /** The server refused the token; the client waits for a new one (`onTokenExpired`, `setToken`). */
  tokenExpired: 'tokenExpired',
  /** The server refused a request for a reason retrying cannot fix; `client.lastError` says which. */
  error: 'error',
});

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A new record id: a ULID (48 bits of milliseconds, 80 random bits, Crockford base32). */
export function newRecordId() {
  let time = Date.now();
  let text = '';
  for (let index = 0; index < 10; index += 1) {
    text = CROCKFORD[time % 32] + text;
    time = Math.floor(time / 32);
  }
  const random = crypto.getRandomValues(new Uint8Array(16));
  for (let index = 0; index < 16; index += 1) text += CROCKFORD[random[index] % 32];
  return text;
}

/**
 * The claims of a JWT, read without checking its signature (the server checks it).
 * @param {string} jwt
 * @returns {object}
 */
export function tokenClaims(jwt) {
  const parts = typeof jwt === 'string' ? jwt.split('.') : [];
  if (parts.length !== 3) throw new Error('The token is not a JWT (three base64url parts separated by dots).');
  let claims;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
    claims = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error('The token\'s payload is not base64url-encoded JSON.');
  }
  if (typeof claims !== 'object' || claims === null || typeof claims.document_id !== 'string') {
    throw new Error('The token has no document_id claim.');
  }
  for (const name of ['layer', 'user_id']) {
    if (claims[name] !== undefined && claims[name] !== null && typeof claims[name] !== 'string') {
      throw new Error(`The token's ${name} claim is not a string.`);
    }
  }
  return claims;
}

/** An error the server answered with: its status and reason. */
/** The listening socket closed before the answer to a sync request sent on it came. */
class SocketClosed extends Error {
  constructor() {
    super('the WebSocket closed before the answer came');
  }
}

export class ServerRefusal extends Error {
  constructor(status, reason) {
    super(reason);
    this.status = status;
  }
}

/**
 * A client of one layer. Create it with {@link InstantClient.open}.
 *
 * Events (it is an `EventTarget`):
 * - `change`: `detail.ids` lists the records whose local view changed (added, changed, removed).
 * - `state`: `detail.state` is the new {@link SyncState}.
 * - `presence`: `detail.users` is `[{userId, connections}]`, who has the layer open.
 * - `synced`: `detail` is `{pushId, revision, acknowledged}`, after each answer applied.
 * - `token`: the client has a new token (from `onTokenExpired` or `setToken`).
 */
export class InstantClient extends EventTarget {
  /** Changes per push and their size in JSON, as the Swift SDK sends at most. */
  static maxChangesPerPush = 1000;
  static maxBytesPerPush = 2 * 1024 * 1024;
  /** The first retry delay and the cap of the backoff, in milliseconds; attempts are not capped. */
  static retryBase = 250;
  static retryCap = 15000;
  /** How long a sync request may take before it counts as lost and is retried. */
  static requestTimeout = 30000;

  /**
   * Opens the client of the layer a token is for: loads what the local store has (so a page
   * reloaded offline shows its records and pending edits at once), then downloads or syncs and
   * listens, in the background.
   * @param {object} options
   * @param {string} options.jwt the client token from the app's backend.
   * @param {string} [options.serverURL] the server; the page's origin by default.
   * @param {() => Promise<string>} [options.onTokenExpired] asked for a new token when the server
   *   refuses the current one; the client goes on with the token it resolves to.
   * @param {'auto'|'websocket'|'long-poll'} [options.listen] how to listen for changes: a
   *   WebSocket, falling back to long-poll when WebSockets fail while the server answers (`auto`,
   *   the default), or only one of them.
   * @returns {Promise<InstantClient>}
   */
  static async open(options) {
    const claims = tokenClaims(options.jwt);
    const scope = { documentId: claims.document_id, layer: claims.layer ?? '', userId: claims.user_id ?? null };
    const store = await ClientStore.open(scope);
    const client = new InstantClient(options, scope, store);
    await client.#loadFromStore();
    client.#start();
    return client;
  }

  #jwt;
  #serverURL;
  #onTokenExpired;
  #listenMode;
  #store;
  #clientId = '';
  #baseRevision = 0;
  #downloaded = false;
  /** The server's records by id: the truth as last received. */
  #server = new Map();
  /** The batch pushed and not yet acknowledged: `{pushId, baseRevision, changes}`. */
  #inFlight = null;
  /** Queued changes by record id, in the order they were first made. */
  #queue = new Map();
  #state = SyncState.clean;
  #syncing = null;
  #syncAgain = false;
  #failures = 0;
  #retryTimer = null;
  #waitingForToken = false;
  #closed = false;
  #socket = null;
  /** How the request of the current sync cycle went out: `null` between requests, 'http' or 'socket'. */
  #via = null;
  /** The sync requests sent on the socket, by request id: their answers' resolvers. */
  #socketRequests = new Map();
  #nextRequestId = 1;
  /** Change messages that came while a request on the socket waited for its answer. */
  #held = [];
  /** WebSockets that closed before opening while the server answered (`auto` falls back after 3). */
  #socketFailures = 0;
  /** Listening attempts in a row that ended before a WebSocket opened (the delay grows with them). */
  #listenAttempts = 0;
  #longPoll = null;
  #listenTimer = null;
  #presence = [];
  #onOnline = () => this.#retryNow();

  constructor(options, scope, store) {
    super();
    this.#jwt = options.jwt;
    this.#serverURL = new URL(options.serverURL ?? globalThis.location.origin);
    this.#onTokenExpired = options.onTokenExpired ?? null;
    this.#listenMode = options.listen ?? 'auto';
    this.#store = store;
    /** The document id, layer name and user id of the token. */
    this.documentId = scope.documentId;
    this.layer = scope.layer;
    this.userId = scope.userId;
    /** The reason of the last refusal or failure, or `null`. */
    this.lastError = null;
  }

  /** The current {@link SyncState}. */
  get state() {
    return this.#state;
  }

  /** Who has the layer open, as the server last said: `[{userId, connections}]`. */
  get presence() {
    return this.#presence;
  }

  /** The client's base revision: the server revision its records are complete up to. */
  get revision() {
    return this.#baseRevision;
  }

  /** The token in use. */
  get jwt() {
    return this.#jwt;
  }

  /** Whether the first download is done (records can be shown). */
  get isDownloaded() {
    return this.#downloaded;
  }

  /** The path of a layer's client routes: `/i/d/{document}` or `/i/d/{document}/l/{layer}`. */
  static layerPath(documentId, layer) {
    const document = `/i/d/${encodeURIComponent(documentId)}`;
    return layer === '' ? document : `${document}/l/${encodeURIComponent(layer)}`;
  }

  /** The path of this client's layer routes. */
  get layerPath() {
    return InstantClient.layerPath(this.documentId, this.layer);
  }

  /** The URL of one of the layer's routes. */
  url(route) {
    return new URL(`${this.layerPath}/${route}`, this.#serverURL);
  }

  /** The `Authorization` header of the client's requests. */
  get authorization() {
    return `Token token="${this.#jwt}"`;
  }

  /**
   * A record as the user sees it: the server's version with the user's pending change on top, or
   * `undefined` when it does not exist (or the user deleted it).
   * @returns {{id, kind, content, group, createdBy, updatedBy, pdfObjectId, pending: boolean}|undefined}
   */
  get(id) {
    const change = this.#queue.get(id) ?? this.#inFlight?.changes.find((entry) => entry.id === id);
    const server = this.#server.get(id);
    if (!change) return server ? { ...server, pending: false } : undefined;
    if (change.op === 'delete') return undefined;
    return {
      id,
      kind: change.kind,
      content: change.content,
      group: change.group ?? server?.group ?? null,
      createdBy: server?.createdBy ?? this.userId,
      updatedBy: this.userId,
      pdfObjectId: server?.pdfObjectId,
      pending: true,
    };
  }

  /** Every record the user sees, of one kind or of all kinds. */
  records(kind) {
    const ids = new Set([...this.#server.keys(), ...this.#queue.keys()]);
    for (const change of this.#inFlight?.changes ?? []) ids.add(change.id);
    const result = [];
    for (const id of ids) {
      const record = this.get(id);
      if (record && (!kind || record.kind === kind)) result.push(record);
    }
    return result;
  }

  /**
   * Creates or replaces a record: it is in the local store (and shown) when the promise resolves,
   * and pushed at once.
   * @param {string} kind `annotation`, `comment`, `formFieldValue` or `bookmark`.
   * @param {string} id the record id ({@link newRecordId} for a new record).
   * @param {object} content the full Instant JSON record.
   * @param {{group?: string}} [options]
   */
  async put(kind, id, content, options = {}) {
    const change = { op: 'put', kind, id, content };
    if (options.group !== undefined) change.group = options.group;
    await this.#enqueue(change);
  }

  /** Deletes a record (and, on the server, the comments of an annotation's thread). */
  async delete(kind, id) {
    await this.#enqueue({ op: 'delete', kind, id });
  }

  /** Gives the client a new token (for example from the app's own refresh) and syncs with it. */
  setToken(jwt) {
    const claims = tokenClaims(jwt);
    if (claims.document_id !== this.documentId || (claims.layer ?? '') !== this.layer) {
      throw new Error('The new token is for another document or layer; open a new client for it.');
    }
    this.#jwt = jwt;
    this.lastError = null;
    this.#waitingForToken = false;
    this.dispatchEvent(new CustomEvent('token'));
    this.#restartListening();
    this.#retryNow();
  }

  /**
   * Gets a new token the way a refusal by the server does (asking `onTokenExpired`, or waiting for
   * `setToken`), for requests the app makes with the client's token, such as the PDF's download.
   * @returns {Promise<void>} resolved once the client has the new token.
   */
  renewToken() {
    const renewed = new Promise((resolve) => this.addEventListener('token', () => resolve(), { once: true }));
    this.#tokenRefused();
    return renewed;
  }

  /**
   * Runs sync cycles until nothing is pending (or the server cannot be reached, when it retries
   * later by itself); resolves when the current cycles are done.
   */
  sync() {
    if (this.#closed) return Promise.resolve();
    if (this.#syncing) {
      this.#syncAgain = true;
      return this.#syncing;
    }
    this.#syncing = this.#syncLoop().finally(() => {
      this.#syncing = null;
    });
    return this.#syncing;
  }

  /** Fetches an attachment of the document (image data), as a `Blob`. */
  async attachment(sha256) {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error('An attachment id is a SHA-256 in lowercase hex.');
    const response = await fetch(this.url(`attachments/${sha256}`), { headers: { Authorization: this.authorization } });
    if (!response.ok) throw new ServerRefusal(response.status, await InstantClient.#reason(response));
    return response.blob();
  }

  /** Stops syncing and listening and releases the local store. Pending changes stay in it. */
  close() {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#listenTimer);
    this.#socket?.close(1000, 'closed');
    this.#longPoll?.abort();
    globalThis.removeEventListener?.('online', this.#onOnline);
    this.#store.close();
  }

  async #loadFromStore() {
    const stored = await this.#store.load();
    this.#clientId = stored.clientId;
    this.#baseRevision = stored.baseRevision;
    this.#downloaded = stored.downloaded;
    for (const record of stored.records) this.#server.set(record.id, record);
    this.#inFlight = stored.inFlight;
    for (const change of stored.queue) this.#queue.set(change.id, change);
    this.#setState(this.#hasPending() ? SyncState.pending : SyncState.clean);
  }

  #start() {
    globalThis.addEventListener?.('online', this.#onOnline);
    this.sync();
    this.#listen();
  }

  #hasPending() {
    return this.#inFlight !== null || this.#queue.size > 0;
  }

  #setState(state) {
    if (state === this.#state) return;
    this.#state = state;
    this.dispatchEvent(new CustomEvent('state', { detail: { state } }));
  }

  #emitChange(ids) {
    if (ids.length > 0) this.dispatchEvent(new CustomEvent('change', { detail: { ids } }));
  }

  async #enqueue(change) {
    if (this.#closed) throw new Error('The client is closed.');
    const queued = await this.#store.enqueue(change);
    this.#queue.set(change.id, queued);
    this.#emitChange([change.id]);
    if (this.#state === SyncState.clean) this.#setState(SyncState.pending);
    this.sync();
  }

  async #syncLoop() {
    do {
      this.#syncAgain = false;
      const succeeded = await this.#cycle();
      if (!succeeded) return;
    } while (this.#syncAgain || this.#hasPending());
  }

  /** One request: the first download, or a push of the pending batch (or a pull). */
  async #cycle() {
    if (this.#waitingForToken) return false;
    // A pull when nothing is pending goes out at once; an edit whose store write is still under
    // way asks for another cycle when it is done.
    const batch = this.#downloaded && this.#hasPending()
      ? await this.#store.takeBatch({
          maxChanges: InstantClient.maxChangesPerPush,
          maxBytes: InstantClient.maxBytesPerPush,
        })
      : null;
    if (batch) {
      this.#inFlight = batch;
      // The queued changes that moved into the batch; an edit made since is queued anew.
      for (const change of batch.changes) {
        if (this.#queue.get(change.id)?.seq === change.seq) this.#queue.delete(change.id);
      }
    }
    this.#setState(batch ? SyncState.sending : SyncState.receiving);
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), InstantClient.requestTimeout);
    let outcome;
    try {
      if (!this.#downloaded) {
        this.#via = 'http';
        outcome = await InstantClient.#overHTTP(this.url('snapshot'), {
          headers: { Authorization: this.authorization },
          signal: controller.signal,
          cache: 'no-store',
        });
      } else {
        const body = {
          clientId: this.#clientId,
          baseRevision: batch ? batch.baseRevision : this.#baseRevision,
          changes: batch ? batch.changes.map(({ seq, ...change }) => change) : [],
        };
        if (batch) body.pushId = batch.pushId;
        const overHTTP = () => {
          this.#via = 'http';
          return InstantClient.#overHTTP(this.url('sync'), {
            method: 'POST',
            headers: { Authorization: this.authorization, 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
            signal: controller.signal,
          });
        };
        // On the listening socket when it is open, so that an active client makes no HTTP request;
        // over HTTP otherwise, and at once when the socket closes before the answer.
        const socket = this.#socket?.readyState === WebSocket.OPEN ? this.#socket : null;
        outcome = socket
          ? await this.#overSocket(socket, body, controller.signal).catch((error) => {
            if (error instanceof SocketClosed) return overHTTP();
            throw error;
          })
          : await overHTTP();
      }
      clearTimeout(timeout);
      if (outcome.answer) {
        await this.#apply(outcome.answer, batch);
        await this.#applyHeld();
        this.#failures = 0;
        this.lastError = null;
        this.#setState(this.#hasPending() ? SyncState.pending : SyncState.clean);
        return true;
      }
    } catch (error) {
      clearTimeout(timeout);
      this.lastError = `The server cannot be reached (${error.message}); changes are kept and sent when it can be.`;
      this.#setState(SyncState.offline);
      this.#scheduleRetry();
      return false;
    } finally {
      this.#via = null;
      this.#held = [];
    }
    return this.#refused(outcome.status, outcome.reason);
  }

  /** A request over HTTP: `{answer}` for a 2xx, `{status, reason}` otherwise. */
  static async #overHTTP(url, init) {
    const response = await fetch(url, init);
    if (response.ok) return { answer: await response.json() };
    return { status: response.status, reason: await InstantClient.#reason(response) };
  }

  /**
   * A sync request on the listening socket (`{"requestId", "sync"}`, docs/PROTOCOL.md): `{answer}`,
   * or `{status, reason}` as over HTTP. Rejects with `SocketClosed` when the socket closes first,
   * and with an error when `signal` aborts.
   */
  #overSocket(socket, body, signal) {
    const requestId = String(this.#nextRequestId++);
    return new Promise((resolve, reject) => {
      this.#socketRequests.set(requestId, { resolve, reject });
      signal.addEventListener('abort', () => {
        this.#socketRequests.delete(requestId);
        reject(new Error('no answer on the WebSocket in time'));
      });
      this.#via = 'socket';
      socket.send(JSON.stringify({ requestId, sync: body }));
    });
  }

  /** The requests on a socket that closed go over HTTP instead. */
  #failSocketRequests() {
    for (const request of this.#socketRequests.values()) request.reject(new SocketClosed());
    this.#socketRequests.clear();
  }

  /** The answer to a sync request on the socket. */
  #answered(message) {
    const request = this.#socketRequests.get(String(message.requestId));
    if (!request) return;
    this.#socketRequests.delete(String(message.requestId));
    if (message.answer) request.resolve({ answer: message.answer });
    else request.resolve({ status: Number(message.error?.status) || 500, reason: String(message.error?.reason) });
  }

  /**
   * The change messages that came while a request on the socket waited: those the answer included
   * are dropped; the rest follow on from it (a gap makes the client pull).
   */
  async #applyHeld() {
    while (this.#held.length > 0) {
      const message = this.#held.shift();
      if (message.revision <= this.#baseRevision) continue;
      if (Array.isArray(message.records) && message.since === this.#baseRevision) await this.#apply(message, null);
      else this.#syncAgain = true;
    }
  }

  /** Handles a refusal: a new token for 401/403, a retry for 5xx and 429, a stop otherwise. */
  #refused(status, reason) {
    this.lastError = reason;
    if (status === 401 || status === 403) {
      this.#tokenRefused();
      return false;
    }
    if (status >= 500 || status === 429 || status === 408) {
      this.#setState(SyncState.offline);
      this.#scheduleRetry();
      return false;
    }
    // A 4xx other than these cannot succeed by sending the same request again.
    this.#setState(SyncState.error);
    return false;
  }

  /** Waits for a new token: asks the app for one, or waits for `setToken`. */
  #tokenRefused() {
    this.#setState(SyncState.tokenExpired);
    if (this.#waitingForToken) return;
    this.#waitingForToken = true;
    this.#socket?.close(1000, 'token refused');
    this.#longPoll?.abort();
    this.#askForToken(0);
  }

  /**
   * Asks the app for a new token (`onTokenExpired`); when it fails or gives none, asks again after
   * a jittered, growing delay (capped, like the sync's retries), until a token arrives.
   */
  #askForToken(attempt) {
    if (!this.#onTokenExpired || !this.#waitingForToken || this.#closed) return;
    Promise.resolve()
      .then(() => this.#onTokenExpired())
      .then((jwt) => {
        if (typeof jwt !== 'string' || !jwt) throw new Error('onTokenExpired gave no token');
        if (!this.#closed) this.setToken(jwt);
      })
      .catch((error) => {
        this.lastError = `The app could not give a new token (${error?.message ?? error}); asking again.`;
        const ceiling = Math.min(InstantClient.retryCap, InstantClient.retryBase * 2 ** Math.min(attempt + 2, 16));
        setTimeout(() => this.#askForToken(attempt + 1), ceiling / 2 + Math.random() * (ceiling / 2));
      });
  }

  /**
   * Applies an answer: to the client's memory and the page first (what the user sees does not
   * wait for the disk), then to the local store, before the next request. Until the store has it,
   * the store is behind, never ahead: a page closed in between syncs again from the older base
   * revision, and resends the batch in flight, which the server does not apply twice.
   */
  async #apply(answer, batch) {
    if (typeof answer.revision !== 'number' || !Array.isArray(answer.records)) {
      throw new Error('The server\'s answer has no revision and records.');
    }
    const ids = new Set();
    const snapshot = !this.#downloaded;
    if (snapshot || answer.reset) {
      for (const id of this.#server.keys()) ids.add(id);
      this.#server.clear();
    }
    for (const record of answer.records) {
      ids.add(record.id);
      if (record.deleted || record.content === null) this.#server.delete(record.id);
      else this.#server.set(record.id, record);
    }
    const settled = !snapshot && batch !== null && typeof answer.pushId === 'number' && answer.pushId >= batch.pushId;
    const acknowledged = [];
    if (settled) {
      for (const change of batch.changes) {
        ids.add(change.id);
        acknowledged.push(change.id);
      }
      this.#inFlight = null;
    }
    this.#baseRevision = answer.revision;
    this.#downloaded = true;
    this.#emitChange([...ids]);
    if (snapshot) await this.#store.applySnapshot(answer);
    else await this.#store.applyAnswer(answer, settled);
    this.dispatchEvent(
      new CustomEvent('synced', {
        detail: { pushId: settled ? batch.pushId : null, revision: answer.revision, acknowledged },
      }),
    );
  }

  /** Retries after a jittered, exponentially growing delay; the delay is capped, the attempts are not. */
  #scheduleRetry() {
    clearTimeout(this.#retryTimer);
    const ceiling = Math.min(InstantClient.retryCap, InstantClient.retryBase * 2 ** Math.min(this.#failures, 16));
    this.#failures += 1;
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.#retryTimer = setTimeout(() => this.sync(), delay);
  }

  #retryNow() {
    if (this.#closed) return;
    clearTimeout(this.#retryTimer);
    this.#failures = 0;
    this.sync();
  }

  // Listening ---------------------------------------------------------------------------------

  #listen() {
    if (this.#closed || this.#waitingForToken) return;
    if (this.#listenMode === 'long-poll' || (this.#listenMode === 'auto' && this.#socketFailures >= 3)) {
      this.#pollLoop();
    } else {
      this.#openSocket();
    }
  }

  #restartListening() {
    clearTimeout(this.#listenTimer);
    if (this.#socket) {
      const socket = this.#socket;
      this.#socket = null;
      socket.onclose = null;
      socket.close(1000, 'new token');
      this.#failSocketRequests();
    }
    this.#longPoll?.abort();
    this.#longPoll = null;
    this.#listen();
  }

  #relisten() {
    clearTimeout(this.#listenTimer);
    const ceiling = Math.min(InstantClient.retryCap, InstantClient.retryBase * 2 ** Math.min(this.#listenAttempts, 16));
    this.#listenTimer = setTimeout(() => this.#listen(), ceiling / 2 + Math.random() * (ceiling / 2));
  }

  #openSocket() {
    const url = this.url('listen');
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('since', String(this.#baseRevision));
    // The records of each commit on the socket, so that a change needs no request.
    url.searchParams.set('changes', 'records');
    url.searchParams.set('jwt', this.#jwt);
    let opened = false;
    const socket = new WebSocket(url);
    this.#socket = socket;
    socket.onopen = () => {
      opened = true;
      this.#socketFailures = 0;
      this.#listenAttempts = 0;
      // Whatever happened while the client was not listening.
      this.#retryNow();
    };
    socket.onmessage = (event) => this.#message(event.data);
    socket.onclose = (event) => {
      this.#failSocketRequests();
      if (this.#socket !== socket) return;
      this.#socket = null;
      if (this.#closed) return;
      this.#presence = [];
      this.dispatchEvent(new CustomEvent('presence', { detail: { users: [] } }));
      if (!opened) this.#listenAttempts += 1;
      // A refused upgrade, a closing for the token (1008) and a server gone look the same from
      // here: a sync tells whether the server is down, the token refused, or only WebSockets fail.
      this.sync().then(() => {
        const reachable = [SyncState.clean, SyncState.pending].includes(this.#state);
        if (!opened && reachable) this.#socketFailures += 1;
        this.#relisten();
      });
    };
  }

  #message(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message?.requestId !== undefined) {
      this.#answered(message);
      return;
    }
    if (typeof message?.revision === 'number' && message.revision > this.#baseRevision) this.#changed(message);
    if (Array.isArray(message?.presence)) {
      this.#presence = message.presence
        .filter((entry) => entry && (typeof entry.userId === 'string' || entry.userId === null))
        .map((entry) => ({ userId: entry.userId, connections: Number(entry.connections) || 0 }));
      this.dispatchEvent(new CustomEvent('presence', { detail: { users: this.#presence } }));
    }
  }

  /**
   * A newer revision on the socket: its records are applied as a sync answer's are (pending changes
   * stay on top of them) when they take the client on from its base revision and no HTTP request
   * is under way whose answer could be older; otherwise, or without records, a sync pulls them.
   * While a request on the socket is under way, they wait for its answer to be applied (answers
   * and messages come in order on the socket).
   */
  #changed(message) {
    if (this.#via === 'socket') {
      this.#held.push(message);
      return;
    }
    const applicable = Array.isArray(message.records) && message.since === this.#baseRevision
      && this.#downloaded && this.#via === null;
    if (!applicable) {
      this.sync();
      return;
    }
    this.#apply(message, null).catch((error) => {
      this.lastError = `Could not keep a change from the server (${error.message}); pulling it instead.`;
      this.sync();
    });
  }

  async #pollLoop() {
    const controller = new AbortController();
    this.#longPoll = controller;
    while (!this.#closed && !controller.signal.aborted && !this.#waitingForToken) {
      const url = this.url('listen');
      url.searchParams.set('since', String(this.#baseRevision));
      try {
        const response = await fetch(url, {
          headers: { Authorization: this.authorization },
          signal: controller.signal,
          cache: 'no-store',
        });
        if (!response.ok) {
          const reason = await InstantClient.#reason(response);
          if (response.status === 401 || response.status === 403) {
            this.lastError = reason;
            this.#tokenRefused();
            return;
          }
          throw new ServerRefusal(response.status, reason);
        }
        const answer = await response.json();
        if (typeof answer.revision === 'number' && answer.revision > this.#baseRevision) await this.sync();
      } catch {
        if (controller.signal.aborted) return;
        await new Promise((resolve) => {
          this.#listenTimer = setTimeout(resolve, InstantClient.retryBase * 4 + Math.random() * 2000);
        });
        await this.sync();
      }
    }
  }

  /** The reason of an error answer (`{"error": {"reason"}}`), or the status text. */
  static async #reason(response) {
    try {
      const body = await response.json();
      if (typeof body?.error?.reason === 'string') return body.error.reason;
    } catch {
      // Not JSON: the status says it.
    }
    return `The server answered ${response.status} ${response.statusText}.`;
  }
}
