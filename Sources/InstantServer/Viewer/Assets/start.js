// The development start page (only on a server running with its generated development
// credentials): lists the documents, uploads PDFs dropped on it with their progress, and opens a
// document in the embedded viewer as the chosen user on the chosen layer, with tokens the server
// mints with its development key. It is also an example of an app embedding the viewer.

import { embedViewer } from './embed.js';

const HEADER = { 'X-OpenInstant-Start-Page': '1' };
let viewer = null;

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

async function reasonOf(response) {
  const body = await response.json().catch(() => null);
  return body?.error?.reason ?? `The server answered ${response.status}.`;
}

/** Lists the documents, newest first. */
async function listDocuments() {
  const error = document.getElementById('list-error');
  const response = await fetch('/dev/api/documents?page_size=1000&order_by=created_at&order_direction=desc', {
    headers: HEADER,
  }).catch((failure) => ({ ok: false, failure }));
  if (!response.ok) {
    error.textContent = response.failure ? `The server cannot be reached: ${response.failure.message}` : await reasonOf(response);
    error.hidden = false;
    return;
  }
  error.hidden = true;
  const documents = (await response.json()).data ?? [];
  const rows = documents.map((entry) => {
    const row = element('tr');
    row.dataset.documentId = entry.id;
    const open = element('button', 'Open');
    open.type = 'button';
    open.className = 'open';
    open.addEventListener('click', () => openDocument(entry));
    const tab = element('button', 'Open in a new tab');
    tab.type = 'button';
    tab.className = 'open-tab';
    tab.addEventListener('click', () => openInTab(entry));
    const actions = element('td');
    actions.append(open, tab);
    row.append(
      element('td', entry.title || entry.id),
      element('td', String(entry.pageCount ?? '')),
      element('td', new Date(entry.createdAt).toLocaleString()),
      actions,
    );
    return row;
  });
  document.getElementById('documents').replaceChildren(...rows);
  document.getElementById('no-documents').hidden = rows.length > 0;
}

/** Uploads one file with a progress bar. */
function upload(file) {
  const entry = element('li');
  const progress = element('progress');
  progress.max = 1;
  progress.value = 0;
  const status = element('span', 'uploading…');
  entry.append(element('span', file.name), progress, status);
  document.getElementById('uploads').append(entry);
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('title', file.name.replace(/\.pdf$/i, ''));
  const request = new XMLHttpRequest();
  request.open('POST', '/dev/api/documents');
  request.setRequestHeader('X-OpenInstant-Start-Page', '1');
  request.upload.addEventListener('progress', (event) => {
    if (event.lengthComputable) progress.value = event.loaded / event.total;
  });
  request.addEventListener('load', () => {
    if (request.status === 200) {
      progress.value = 1;
      status.textContent = 'done';
      listDocuments();
      return;
    }
    let reason = `The server answered ${request.status}.`;
    try {
      reason = JSON.parse(request.responseText).error.reason ?? reason;
    } catch {
      // Not the server's JSON error: the status says it.
    }
    status.textContent = reason;
    status.className = 'error';
  });
  request.addEventListener('error', () => {
    status.textContent = 'The upload failed: the server cannot be reached.';
    status.className = 'error';
  });
  request.send(form);
}

/** A token for the document as the chosen user on the chosen layer. */
async function mintToken(documentId) {
  const response = await fetch('/dev/api/token', {
    method: 'POST',
    headers: { ...HEADER, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      document_id: documentId,
      layer: document.getElementById('layer-name').value.trim(),
      user_id: document.getElementById('user-id').value.trim() || null,
    }),
  });
  if (!response.ok) throw new Error(await reasonOf(response));
  return (await response.json()).data.jwt;
}

async function openDocument(entry) {
  const area = document.getElementById('viewer-area');
  const container = document.getElementById('viewer-container');
  const requests = document.getElementById('token-requests');
  const state = document.getElementById('viewer-state');
  viewer?.destroy();
  viewer = null;
  let jwt;
  try {
    jwt = await mintToken(entry.id);
  } catch (error) {
    alertInArea(error.message);
    return;
  }
  const user = document.getElementById('user-id').value.trim();
  const layer = document.getElementById('layer-name').value.trim();
  document.getElementById('viewer-title').textContent = `${entry.title || entry.id} — ${user || 'anonymous'} on ${layer ? `layer “${layer}”` : 'the default layer'}`;
  requests.dataset.count = '0';
  requests.textContent = '';
  area.hidden = false;
  viewer = embedViewer({
    container,
    jwt,
    onTokenExpired: async () => {
      const count = Number(requests.dataset.count) + 1;
      requests.dataset.count = String(count);
      requests.textContent = `new tokens: ${count}`;
      return mintToken(entry.id);
    },
    onStateChange: (value) => {
      state.dataset.state = value;
      state.textContent = value;
    },
  });
  area.scrollIntoView({ behavior: 'smooth' });
}

async function openInTab(entry) {
  try {
    const jwt = await mintToken(entry.id);
    window.open(`/viewer#${new URLSearchParams({ jwt })}`, '_blank', 'noopener');
  } catch (error) {
    alertInArea(error.message);
  }
}

function alertInArea(text) {
  const error = document.getElementById('list-error');
  error.textContent = text;
  error.hidden = false;
}

function bindUpload() {
  const zone = document.getElementById('drop-zone');
  const input = document.getElementById('file-input');
  input.addEventListener('change', () => {
    for (const file of input.files) upload(file);
    input.value = '';
  });
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    for (const file of event.dataTransfer.files) upload(file);
  });
}

document.getElementById('close-viewer').addEventListener('click', () => {
  viewer?.destroy();
  viewer = null;
  document.getElementById('viewer-area').hidden = true;
});
document.getElementById('identity').addEventListener('submit', (event) => event.preventDefault());
bindUpload();
listDocuments();
