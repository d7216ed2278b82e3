// The side panel: the selected annotation (its type, author, text for notes and free text, a
// delete button) and its comment thread with a reply box; with nothing selected, every thread of
// the layer. Text from records only ever becomes text nodes.

import { newRecordId } from './instant-client.js';
import { plainText, typeName } from './annotation-drawing.js';

/** The comments of a thread, oldest first. */
function threadOf(client, rootId) {
  return client
    .records('comment')
    .filter((comment) => comment.content?.rootId === rootId)
    .sort((a, b) => String(a.content.createdAt ?? '').localeCompare(String(b.content.createdAt ?? '')) || a.id.localeCompare(b.id));
}

function item(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The author of a record: its creator name, else its user id. */
function author(record) {
  const name = record.content?.creatorName;
  if (typeof name === 'string' && name) return name;
  return record.createdBy ?? 'Unknown';
}

export class Sidebar {
  /**
   * @param {HTMLElement} root the panel's element (its parts are found by their ids).
   * @param {import('./instant-client.js').InstantClient} client
   * @param {import('./tools.js').Tools} tools
   * @param {import('./pdf-pages.js').PDFPages} pages
   */
  constructor(root, client, tools, pages) {
    this.root = root;
    this.client = client;
    this.tools = tools;
    this.pages = pages;
    this.selected = root.querySelector('#selected-annotation');
    this.title = root.querySelector('#selected-title');
    this.meta = root.querySelector('#selected-meta');
    this.textEditor = root.querySelector('#annotation-text');
    this.textLabel = root.querySelector('#annotation-text-label');
    this.thread = root.querySelector('#thread');
    this.reply = root.querySelector('#reply-text');
    this.threads = root.querySelector('#threads');
    this.threadList = root.querySelector('#thread-list');
    root.querySelector('#reply-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.#reply();
    });
    root.querySelector('#delete-annotation').addEventListener('click', () => tools.deleteSelection());
    this.textEditor.addEventListener('change', () => this.#saveText());
    tools.addEventListener('select', () => this.render());
    tools.addEventListener('edittext', () => {
      this.render();
      this.textEditor.focus();
      this.textEditor.select();
    });
    client.addEventListener('change', () => this.render());
    this.render();
  }

  /** Draws the panel for the current selection. */
  render() {
    const record = this.tools.selectedId ? this.client.get(this.tools.selectedId) : null;
    this.selected.hidden = !record;
    this.threads.hidden = Boolean(record);
    if (!record) {
      this.#renderThreadList();
      return;
    }
    this.selected.dataset.recordId = record.id;
    this.title.textContent = typeName(record.content.type);
    this.meta.textContent = `${author(record)} · page ${Number(record.content.pageIndex) + 1}${record.pending ? ' · not synced yet' : ''}`;
    const editable = record.content.type === 'pspdfkit/note' || record.content.type === 'pspdfkit/text';
    this.textLabel.hidden = !editable;
    // What the user is typing stays until they leave the field (which saves it).
    if (editable && document.activeElement !== this.textEditor) this.textEditor.value = plainText(record.content.text);
    this.thread.replaceChildren(
      ...threadOf(this.client, record.id).map((comment) => {
        const entry = item('li', 'comment');
        entry.dataset.recordId = comment.id;
        entry.append(item('span', 'comment-author', author(comment)), item('p', 'comment-text', plainText(comment.content.text)));
        if (comment.pending) entry.classList.add('pending');
        return entry;
      }),
    );
  }

  #renderThreadList() {
    const roots = new Map();
    for (const comment of this.client.records('comment')) {
      const rootId = comment.content?.rootId;
      if (typeof rootId === 'string') roots.set(rootId, (roots.get(rootId) ?? 0) + 1);
    }
    const entries = [];
    for (const [rootId, count] of roots) {
      const root = this.client.get(rootId);
      if (!root) continue;
      const entry = item('li', 'thread-entry');
      const button = item('button', 'link-button', `${typeName(root.content.type)} on page ${Number(root.content.pageIndex) + 1}`);
      button.type = 'button';
      button.addEventListener('click', () => {
        this.pages.scrollToPage(root.content.pageIndex);
        this.tools.setTool('select');
        this.tools.select(rootId);
      });
      entry.append(button, item('span', 'thread-count', `${count} comment${count === 1 ? '' : 's'}`));
      entries.push(entry);
    }
    if (entries.length === 0) entries.push(item('li', 'empty', 'No comments yet. Select an annotation to comment on it.'));
    this.threadList.replaceChildren(...entries);
  }

  async #saveText() {
    const record = this.tools.selectedId ? this.client.get(this.tools.selectedId) : null;
    if (!record) return;
    const value = this.textEditor.value;
    if (value === plainText(record.content.text)) return;
    await this.client.put('annotation', record.id, { ...record.content, text: { format: 'plain', value } });
  }

  async #reply() {
    const record = this.tools.selectedId ? this.client.get(this.tools.selectedId) : null;
    const value = this.reply.value.trim();
    if (!record || !value) return;
    this.reply.value = '';
    await this.client.put('comment', newRecordId(), {
      v: 2,
      type: 'pspdfkit/comment',
      rootId: record.id,
      pageIndex: record.content.pageIndex,
      text: { format: 'plain', value },
    });
  }
}
