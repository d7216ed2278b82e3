// The client's local store in IndexedDB: the server's records of one layer, the changes not yet
// acknowledged (the batch in flight and the queue behind it) and the sync state (client id, base
// revision, last push id). Every step of the sync protocol that changes several of these does it
// in one transaction, so a reload or a crash never leaves them half-updated.

const RECORDS = 'records';
const QUEUE = 'queue';
const META = 'meta';
const PREFIX = 'openinstant';

/** Resolves with the result of an IndexedDB request. */
function requestResult(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Resolves when a transaction commits, rejects when it aborts. */
function transactionDone(transaction) {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onabort = () => reject(transaction.error ?? new Error('The IndexedDB transaction was aborted.'));
    transaction.onerror = () => reject(transaction.error);
  });
}

/** 32 hex digits from the platform's cryptographic random source. */
export function randomHex(bytes = 16) {
  const values = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(values, (value) => value.toString(16).padStart(2, '0')).join('');
}

/**
 * Holds an exclusive Web Lock named `name` until the returned function is called; resolves with
 * `null` when another page holds it. Without Web Locks (pages that are not a secure context),
 * resolves with a function that does nothing.
 */
function acquireLock(name) {
  if (!globalThis.navigator?.locks) return Promise.resolve(() => {});
  return new Promise((resolve) => {
    navigator.locks.request(name, { ifAvailable: true }, (lock) => {
      if (!lock) {
        resolve(null);
        return undefined;
      }
      return new Promise((release) => resolve(release));
    });
  });
}

/**
 * One local store of one layer for one user. A page holds its store exclusively (a Web Lock) while
 * it is open: two tabs on the same layer each have their own store and client id. A tab finds its
 * own store again after a reload (its id is in the tab's sessionStorage); a new tab takes over a
 * store no open tab holds, so edits a closed tab could not push are pushed by the next one.
 */
export class ClientStore {
  /**
   * Opens (or creates) a store for a layer and user.
   * @param {{documentId: string, layer: string, userId: ?string}} scope
   * @returns {Promise<ClientStore>}
   */
  static async open(scope) {
    const prefix = [PREFIX, scope.documentId, scope.layer, scope.userId ?? '']
      .map(encodeURIComponent)
      .join('/') + '/';
    const remembered = globalThis.sessionStorage?.getItem(prefix);
    const candidates = remembered ? [remembered] : [];
    if (indexedDB.databases) {
      for (const database of await indexedDB.databases()) {
        const name = database.name ?? '';
        if (name.startsWith(prefix) && !candidates.includes(name.slice(prefix.length))) {
          candidates.push(name.slice(prefix.length));
        }
      }
    }
    let storeId = null;
    let release = null;
    for (const candidate of candidates) {
      release = await acquireLock(prefix + candidate);
      if (release) {
        storeId = candidate;
        break;
      }
    }
    if (!storeId) {
      storeId = randomHex(8);
      release = await acquireLock(prefix + storeId);
    }
    globalThis.sessionStorage?.setItem(prefix, storeId);
    const database = await new Promise((resolve, reject) => {
      const request = indexedDB.open(prefix + storeId, 1);
      request.onupgradeneeded = () => {
        const db = request.result;
        db.createObjectStore(RECORDS, { keyPath: 'id' });
        db.createObjectStore(QUEUE, { keyPath: 'id' });
        db.createObjectStore(META);
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error('The local store is blocked by another page; close it and reload.'));
    });
    const store = new ClientStore(database, release);
    await store.#ensureClientId();
    return store;
  }

  #database;
  #release;

  constructor(database, release) {
    this.#database = database;
    this.#release = release;
  }

  /** Closes the database and releases the store for other pages. */
  close() {
    this.#database.close();
    this.#release?.();
  }

  async #ensureClientId() {
    const transaction = this.#database.transaction(META, 'readwrite');
    const meta = transaction.objectStore(META);
    if (!(await requestResult(meta.get('clientId')))) {
      meta.put(randomHex(16), 'clientId');
      meta.put(0, 'baseRevision');
      meta.put(0, 'lastPushId');
      meta.put(false, 'downloaded');
    }
    await transactionDone(transaction);
  }

  /**
   * Everything in the store.
   * @returns {Promise<{clientId: string, baseRevision: number, lastPushId: number, downloaded: boolean,
   *   inFlight: ?object, records: object[], queue: object[]}>}
   */
  async load() {
    const transaction = this.#database.transaction([RECORDS, QUEUE, META], 'readonly');
    const meta = transaction.objectStore(META);
    const [clientId, baseRevision, lastPushId, downloaded, inFlight, records, queue] = await Promise.all([
      requestResult(meta.get('clientId')),
      requestResult(meta.get('baseRevision')),
      requestResult(meta.get('lastPushId')),
      requestResult(meta.get('downloaded')),
      requestResult(meta.get('inFlight')),
      requestResult(transaction.objectStore(RECORDS).getAll()),
      requestResult(transaction.objectStore(QUEUE).getAll()),
    ]);
    queue.sort((a, b) => a.seq - b.seq);
    return { clientId, baseRevision, lastPushId, downloaded, inFlight: inFlight ?? null, records, queue };
  }

  /**
   * Queues a local change, replacing a queued change of the same record but keeping its place (a
   * comment created after its annotation stays after it).
   * @param {{op: string, kind: string, id: string, content?: object, group?: ?string}} change
   * @returns {Promise<object>} the queued change, with its `seq`.
   */
  async enqueue(change) {
    const transaction = this.#database.transaction([QUEUE, META], 'readwrite');
    const queue = transaction.objectStore(QUEUE);
    const meta = transaction.objectStore(META);
    const existing = await requestResult(queue.get(change.id));
    let seq = existing?.seq;
    if (seq === undefined) {
      seq = ((await requestResult(meta.get('lastSeq'))) ?? 0) + 1;
      meta.put(seq, 'lastSeq');
    }
    const queued = { ...change, seq };
    queue.put(queued);
    await transactionDone(transaction);
    return queued;
  }

  /**
   * The batch to push: the one in flight if there is one (a retry sends it again, unchanged),
   * else the oldest queued changes as a new batch with the next push id, moved out of the queue in
   * the same transaction (each change keeps its queue `seq`, which the wire format leaves out).
   * `null` when nothing is pending.
   * @param {{maxChanges: number, maxBytes: number}} limits
   */
  async takeBatch(limits) {
    const transaction = this.#database.transaction([QUEUE, META], 'readwrite');
    const meta = transaction.objectStore(META);
    const inFlight = await requestResult(meta.get('inFlight'));
    if (inFlight) {
      await transactionDone(transaction);
      return inFlight;
    }
    const queue = transaction.objectStore(QUEUE);
    const queued = (await requestResult(queue.getAll())).sort((a, b) => a.seq - b.seq);
    if (queued.length === 0) {
      await transactionDone(transaction);
      return null;
    }
    const changes = [];
    let bytes = 0;
    for (const entry of queued) {
      const size = JSON.stringify(entry).length;
      if (changes.length > 0 && (changes.length >= limits.maxChanges || bytes + size > limits.maxBytes)) break;
      changes.push(entry);
      bytes += size;
      queue.delete(entry.id);
    }
    const pushId = ((await requestResult(meta.get('lastPushId'))) ?? 0) + 1;
    const baseRevision = (await requestResult(meta.get('baseRevision'))) ?? 0;
    const batch = { pushId, baseRevision, changes };
    meta.put(pushId, 'lastPushId');
    meta.put(batch, 'inFlight');
    await transactionDone(transaction);
    return batch;
  }

  /**
   * Applies a snapshot (`GET .../snapshot`): it replaces every record.
   * @param {{revision: number, records: object[]}} snapshot
   */
  async applySnapshot(snapshot) {
    const transaction = this.#database.transaction([RECORDS, META], 'readwrite');
    const records = transaction.objectStore(RECORDS);
    records.clear();
    for (const record of snapshot.records) records.put(record);
    const meta = transaction.objectStore(META);
    meta.put(snapshot.revision, 'baseRevision');
    meta.put(true, 'downloaded');
    await transactionDone(transaction);
  }

  /**
   * Applies a sync answer (docs/PROTOCOL.md, "What the client does with the answer"): the records
   * (after forgetting every other record on a reset), the settled batch, the new base revision.
   * @param {object} answer the server's answer.
   * @param {boolean} settled whether the answer acknowledges the batch in flight.
   */
  async applyAnswer(answer, settled) {
    const transaction = this.#database.transaction([RECORDS, META], 'readwrite');
    const records = transaction.objectStore(RECORDS);
    if (answer.reset) records.clear();
    for (const record of answer.records) {
      if (record.deleted || record.content === null) records.delete(record.id);
      else records.put(record);
    }
    const meta = transaction.objectStore(META);
    if (settled) meta.delete('inFlight');
    meta.put(answer.revision, 'baseRevision');
    meta.put(true, 'downloaded');
    await transactionDone(transaction);
  }
}
