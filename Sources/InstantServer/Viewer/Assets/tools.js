// The viewer's tools: select (move, resize, delete), ink pen, highlighter on selected text, note,
// rectangle, ellipse, line and free text, with a colour and a width per tool. Every edit becomes a
// record put or delete on the client, which shows it at once and pushes it.

import { newRecordId } from './instant-client.js';
import { rect, point } from './annotation-drawing.js';

const SVG = 'http://www.w3.org/2000/svg';

/** The tools and their starting colour and width (stroke width in points, or font size). */
export const TOOLS = {
  select: null,
  ink: { color: '#dc2626', width: 2 },
  highlight: { color: '#fde047', width: 0 },
  note: { color: '#fcd34d', width: 0 },
  rectangle: { color: '#2563eb', width: 2 },
  ellipse: { color: '#16a34a', width: 2 },
  line: { color: '#9333ea', width: 2 },
  text: { color: '#111827', width: 14 },
};

/**
 * Applies an affine map to every coordinate of an annotation: its box, ink points, markup rects,
 * line ends and points.
 * @param {object} content an Instant JSON annotation.
 * @param {(x: number, y: number) => number[]} map
 */
export function mapContent(content, map) {
  const next = structuredClone(content);
  const mapPoint = (value) => {
    const valid = point(value);
    return valid ? map(valid[0], valid[1]) : value;
  };
  const mapRect = (value) => {
    const valid = rect(value);
    if (!valid) return value;
    const [x1, y1] = map(valid[0], valid[1]);
    const [x2, y2] = map(valid[0] + valid[2], valid[1] + valid[3]);
    return [Math.min(x1, x2), Math.min(y1, y2), Math.abs(x2 - x1), Math.abs(y2 - y1)];
  };
  next.bbox = mapRect(content.bbox);
  if (Array.isArray(next.lines?.points)) {
    next.lines.points = next.lines.points.map((line) => (Array.isArray(line) ? line.map(mapPoint) : line));
  }
  if (Array.isArray(next.rects)) next.rects = next.rects.map(mapRect);
  if (Array.isArray(next.points)) next.points = next.points.map(mapPoint);
  for (const name of ['startPoint', 'endPoint']) if (next[name]) next[name] = mapPoint(next[name]);
  if (next.callout) {
    for (const name of ['start', 'end', 'knee']) if (next.callout[name]) next.callout[name] = mapPoint(next.callout[name]);
  }
  return next;
}

/** The bounding box `[left, top, width, height]` of points, grown by `margin` on every side. */
export function boundsOf(points, margin = 0) {
  const xs = points.map((entry) => entry[0]);
  const ys = points.map((entry) => entry[1]);
  const left = Math.min(...xs) - margin;
  const top = Math.min(...ys) - margin;
  return [left, top, Math.max(...xs) + margin - left, Math.max(...ys) + margin - top];
}

/**
 * Joins rectangles of one line of text: client rectangles of a selection come per text run and
 * element, overlapping and in pieces.
 * @param {number[][]} rects `[left, top, width, height]` in page points.
 */
export function mergeLineRects(rects) {
  const sorted = rects.filter((entry) => entry[2] > 0.5 && entry[3] > 0.5).sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  const merged = [];
  for (const candidate of sorted) {
    const line = merged.find((entry) => {
      const overlap = Math.min(entry[1] + entry[3], candidate[1] + candidate[3]) - Math.max(entry[1], candidate[1]);
      const gap = Math.max(entry[0], candidate[0]) - Math.min(entry[0] + entry[2], candidate[0] + candidate[2]);
      return overlap > 0.5 * Math.min(entry[3], candidate[3]) && gap < 0.5 * Math.min(entry[3], candidate[3]);
    });
    if (!line) {
      merged.push([...candidate]);
      continue;
    }
    const right = Math.max(line[0] + line[2], candidate[0] + candidate[2]);
    const bottom = Math.max(line[1] + line[3], candidate[1] + candidate[3]);
    line[0] = Math.min(line[0], candidate[0]);
    line[1] = Math.min(line[1], candidate[1]);
    line[2] = right - line[0];
    line[3] = bottom - line[1];
  }
  return merged;
}

function svgElement(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

/**
 * The tool controller. Events: `select` (`detail.id`, or `null`), `tool` (`detail.tool`).
 */
export class Tools extends EventTarget {
  /**
   * @param {import('./pdf-pages.js').PDFPages} pages
   * @param {import('./instant-client.js').InstantClient} client
   * @param {import('./annotation-drawing.js').AnnotationLayer} layer
   */
  constructor(pages, client, layer) {
    super();
    this.pages = pages;
    this.client = client;
    this.layer = layer;
    this.tool = 'select';
    this.settings = structuredClone(TOOLS);
    this.selectedId = null;
    this.gesture = null;
    const root = pages.container;
    root.addEventListener('pointerdown', (event) => this.#down(event));
    root.addEventListener('pointermove', (event) => this.#move(event));
    root.addEventListener('pointerup', (event) => this.#up(event));
    root.addEventListener('pointercancel', () => this.#cancel());
    document.addEventListener('keydown', (event) => this.#key(event));
    // A selection of text may end anywhere on the page, not only over a PDF page.
    document.addEventListener('pointerup', () => {
      if (this.tool === 'highlight') this.highlightSelection();
    });
    pages.addEventListener('annotationschanged', (event) => {
      if (this.selectedId && event.detail.ids.includes(this.selectedId)) this.#drawSelection();
    });
    pages.addEventListener('zoom', () => this.#drawSelection());
  }

  /** Chooses a tool; the highlighter also highlights text selected before it was chosen. */
  setTool(tool) {
    if (!(tool in TOOLS)) return;
    this.tool = tool;
    document.body.dataset.tool = tool;
    if (tool !== 'select') this.select(null);
    this.dispatchEvent(new CustomEvent('tool', { detail: { tool } }));
    if (tool === 'highlight') this.highlightSelection();
  }

  /** The colour and width of the current tool. */
  get current() {
    return this.settings[this.tool] ?? { color: '#000000', width: 1 };
  }

  /** Selects an annotation (or none) and outlines it with its resize handles. */
  select(id) {
    this.selectedId = id && this.client.get(id) ? id : null;
    for (const element of document.querySelectorAll('.record.selected')) element.classList.remove('selected');
    this.#drawSelection();
    this.dispatchEvent(new CustomEvent('select', { detail: { id: this.selectedId } }));
  }

  /** Deletes the selected annotation. */
  async deleteSelection() {
    const id = this.selectedId;
    if (!id) return;
    this.select(null);
    await this.client.delete('annotation', id);
  }

  #drawSelection() {
    for (const page of this.pages.pages) page.overlay.replaceChildren();
    const record = this.selectedId ? this.client.get(this.selectedId) : null;
    const bbox = rect(record?.content?.bbox);
    const page = this.pages.pages[record?.content?.pageIndex];
    if (!bbox || !page?.pdfPage) return;
    this.layer.elements.get(this.selectedId)?.classList.add('selected');
    const [x, y, w, h] = bbox;
    const pixel = 1 / (this.pages.zoom * (96 / 72));
    page.overlay.append(
      svgElement('rect', { x, y, width: w, height: h, class: 'selection-box', 'stroke-width': pixel * 1.5 }),
    );
    const size = pixel * 9;
    for (const [cx, cy, corner] of [[x, y, 'nw'], [x + w, y, 'ne'], [x, y + h, 'sw'], [x + w, y + h, 'se']]) {
      page.overlay.append(
        svgElement('rect', {
          x: cx - size / 2, y: cy - size / 2, width: size, height: size, class: `handle handle-${corner}`,
          'data-corner': corner, 'stroke-width': pixel,
        }),
      );
    }
  }

  #pageOf(event) {
    const element = event.target.closest?.('.page');
    return element ? this.pages.pages[Number(element.dataset.pageIndex)] : null;
  }

  #down(event) {
    if (event.button !== 0) return;
    const page = this.#pageOf(event);
    if (!page?.pdfPage) return;
    const at = page.toPage(event.clientX, event.clientY);
    if (this.tool === 'select') {
      const handle = event.target.closest('.handle');
      const recordElement = event.target.closest('.record');
      if (handle && this.selectedId) {
        this.#startGesture(event, page, { kind: 'resize', corner: handle.dataset.corner, start: at });
      } else if (recordElement) {
        this.select(recordElement.dataset.recordId);
        this.#startGesture(event, page, { kind: 'move', start: at });
      } else {
        // A press elsewhere (on the text, to select it) drops the selection.
        this.select(null);
      }
      return;
    }
    if (this.tool === 'highlight') return;
    event.preventDefault();
    if (this.tool === 'note' || this.tool === 'text') {
      this.#place(page, at);
      return;
    }
    const preview = svgElement('path', {
      class: 'preview',
      fill: 'none',
      stroke: this.current.color,
      'stroke-width': this.current.width,
      'stroke-linecap': 'round',
      'stroke-linejoin': 'round',
    });
    page.overlay.append(preview);
    this.#startGesture(event, page, { kind: 'draw', start: at, points: [at], preview });
  }

  #startGesture(event, page, gesture) {
    this.gesture = { ...gesture, page, pointerId: event.pointerId, current: gesture.start };
    event.target.setPointerCapture?.(event.pointerId);
  }

  #move(event) {
    const gesture = this.gesture;
    if (!gesture || event.pointerId !== gesture.pointerId) return;
    const events = event.getCoalescedEvents?.() ?? [event];
    for (const each of events.length ? events : [event]) {
      const at = gesture.page.toPage(each.clientX, each.clientY);
      gesture.current = at;
      if (gesture.kind === 'draw' && this.tool === 'ink') gesture.points.push(at);
    }
    if (gesture.kind === 'draw') {
      gesture.preview.setAttribute('d', this.#previewPath(gesture));
    } else {
      const element = this.layer.elements.get(this.selectedId);
      const matrix = this.#gestureMatrix(gesture);
      if (element && matrix) element.setAttribute('transform', `matrix(${matrix.join(' ')})`);
    }
  }

  #previewPath(gesture) {
    const [x1, y1] = gesture.start;
    const [x2, y2] = gesture.current;
    switch (this.tool) {
      case 'ink':
        return gesture.points.map(([x, y], index) => `${index ? 'L' : 'M'}${x} ${y}`).join('');
      case 'line':
        return `M${x1} ${y1}L${x2} ${y2}`;
      case 'ellipse': {
        const [rx, ry] = [Math.abs(x2 - x1) / 2, Math.abs(y2 - y1) / 2];
        const [cx, cy] = [(x1 + x2) / 2, (y1 + y2) / 2];
        return `M${cx - rx} ${cy}a${rx} ${ry} 0 1 0 ${2 * rx} 0a${rx} ${ry} 0 1 0 ${-2 * rx} 0`;
      }
      default:
        return `M${x1} ${y1}H${x2}V${y2}H${x1}Z`;
    }
  }

  /** The matrix `[a, b, c, d, e, f]` of a move or resize gesture so far, or `null`. */
  #gestureMatrix(gesture) {
    const record = this.client.get(this.selectedId);
    const bbox = rect(record?.content?.bbox);
    if (!bbox) return null;
    const [dx, dy] = [gesture.current[0] - gesture.start[0], gesture.current[1] - gesture.start[1]];
    if (gesture.kind === 'move') return [1, 0, 0, 1, dx, dy];
    const [x, y, w, h] = bbox;
    // The corner opposite the dragged one stays where it is.
    const west = gesture.corner.endsWith('w');
    const north = gesture.corner.startsWith('n');
    const fixedX = west ? x + w : x;
    const fixedY = north ? y + h : y;
    const newW = Math.max(2, west ? w - dx : w + dx);
    const newH = Math.max(2, north ? h - dy : h + dy);
    const sx = w > 0 ? newW / w : 1;
    const sy = h > 0 ? newH / h : 1;
    return [sx, 0, 0, sy, fixedX - fixedX * sx, fixedY - fixedY * sy];
  }

  async #up(event) {
    const gesture = this.gesture;
    if (!gesture || event.pointerId !== gesture.pointerId) return;
    this.gesture = null;
    if (gesture.kind === 'draw') {
      gesture.preview.remove();
      await this.#create(gesture);
      return;
    }
    const element = this.layer.elements.get(this.selectedId);
    const matrix = this.#gestureMatrix(gesture);
    element?.removeAttribute('transform');
    const moved = Math.hypot(gesture.current[0] - gesture.start[0], gesture.current[1] - gesture.start[1]);
    const record = this.client.get(this.selectedId);
    if (!record || !matrix || moved < 0.5) return;
    const [a, , , d, e, f] = matrix;
    await this.client.put('annotation', record.id, mapContent(record.content, (x, y) => [a * x + e, d * y + f]));
  }

  #cancel() {
    if (this.gesture?.preview) this.gesture.preview.remove();
    this.layer.elements.get(this.selectedId)?.removeAttribute('transform');
    this.gesture = null;
  }

  #key(event) {
    if (event.target.closest?.('input, textarea, [contenteditable]')) return;
    if ((event.key === 'Delete' || event.key === 'Backspace') && this.selectedId) {
      event.preventDefault();
      this.deleteSelection();
    } else if (event.key === 'Escape') {
      this.select(null);
    }
  }

  /** A new annotation's common members. */
  #base(type, page, bbox) {
    return { v: 2, type, pageIndex: page.index, bbox: bbox.map((value) => Math.round(value * 100) / 100), opacity: 1 };
  }

  async #create(gesture) {
    const { page, start, current } = gesture;
    const { color, width } = this.current;
    const round = (entry) => [Math.round(entry[0] * 100) / 100, Math.round(entry[1] * 100) / 100];
    const [x1, y1] = start;
    const [x2, y2] = current;
    let content;
    if (this.tool === 'ink') {
      const points = gesture.points.map(round);
      content = {
        ...this.#base('pspdfkit/ink', page, boundsOf(points, width / 2)),
        lines: { points: [points], intensities: [points.map(() => 0.5)] },
        lineWidth: width,
        strokeColor: color,
        isDrawnNaturally: false,
      };
    } else {
      if (Math.hypot(x2 - x1, y2 - y1) < 2) return;
      const box = [Math.min(x1, x2), Math.min(y1, y2), Math.abs(x2 - x1), Math.abs(y2 - y1)];
      if (this.tool === 'line') {
        content = {
          ...this.#base('pspdfkit/shape/line', page, boundsOf([start, current], width / 2)),
          startPoint: round(start),
          endPoint: round(current),
          strokeColor: color,
          strokeWidth: width,
        };
      } else {
        const type = this.tool === 'ellipse' ? 'pspdfkit/shape/ellipse' : 'pspdfkit/shape/rectangle';
        content = { ...this.#base(type, page, box), strokeColor: color, strokeWidth: width };
      }
    }
    const id = newRecordId();
    await this.client.put('annotation', id, content);
  }

  /** A note or a free text where the user clicked; selected, so that its text can be typed. */
  async #place(page, [x, y]) {
    const { color, width } = this.current;
    const id = newRecordId();
    const content =
      this.tool === 'note'
        ? { ...this.#base('pspdfkit/note', page, [x - 12, y - 12, 24, 24]), text: { format: 'plain', value: '' }, icon: 'comment', color }
        : {
            ...this.#base('pspdfkit/text', page, [x, y - width, Math.max(120, width * 10), width * 2]),
            text: { format: 'plain', value: 'Text' },
            fontSize: width,
            fontColor: color,
            horizontalAlign: 'left',
            verticalAlign: 'top',
          };
    await this.client.put('annotation', id, content);
    this.setTool('select');
    this.select(id);
    this.dispatchEvent(new CustomEvent('edittext', { detail: { id } }));
  }

  /**
   * Highlights the text the user selected in the text layers: one highlight per page, whose rects
   * are the selection's boxes on that page (a box per line).
   */
  async highlightSelection() {
    const selection = globalThis.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return;
    const byPage = new Map();
    for (let index = 0; index < selection.rangeCount; index += 1) {
      for (const box of selection.getRangeAt(index).getClientRects()) {
        if (box.width < 1 || box.height < 1) continue;
        const centerX = box.left + box.width / 2;
        const centerY = box.top + box.height / 2;
        const page = this.pages.pages.find((each) => {
          const area = each.div.getBoundingClientRect();
          return each.pdfPage && centerX >= area.left && centerX <= area.right && centerY >= area.top && centerY <= area.bottom;
        });
        if (!page) continue;
        if (!byPage.has(page)) byPage.set(page, []);
        byPage.get(page).push(page.rectToPage(box));
      }
    }
    selection.removeAllRanges();
    for (const [page, boxes] of byPage) {
      const rects = mergeLineRects(boxes).map((entry) => entry.map((value) => Math.round(value * 100) / 100));
      if (rects.length === 0) continue;
      const corners = rects.flatMap(([x, y, w, h]) => [[x, y], [x + w, y + h]]);
      const content = {
        ...this.#base('pspdfkit/markup/highlight', page, boundsOf(corners)),
        rects,
        color: this.settings.highlight.color,
        blendMode: 'multiply',
      };
      await this.client.put('annotation', newRecordId(), content);
    }
  }
}

