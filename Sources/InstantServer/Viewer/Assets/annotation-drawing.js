// Draws a layer's annotation records on the pages: every type of Instant JSON annotation the
// viewer shows becomes an SVG group in page coordinates, with `data-record-id`. Records come from
// other users and from PDFs of unknown origin: every number is checked to be finite, every colour
// to be `#rrggbb`, and text only ever becomes text nodes.

const SVG = 'http://www.w3.org/2000/svg';

/** A finite number, or `fallback`. */
function number(value, fallback = 0) {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** `[left, top, width, height]` with finite numbers and no negative size, or `null`. */
export function rect(value) {
  if (!Array.isArray(value) || value.length !== 4) return null;
  const numbers = value.map((entry) => number(entry, NaN));
  if (numbers.some(Number.isNaN) || numbers[2] < 0 || numbers[3] < 0) return null;
  return numbers;
}

/** `[x, y]` with finite numbers, or `null`. */
export function point(value) {
  if (!Array.isArray(value) || value.length < 2) return null;
  const x = number(value[0], NaN);
  const y = number(value[1], NaN);
  return Number.isNaN(x) || Number.isNaN(y) ? null : [x, y];
}

/** A colour of the format (`#rrggbb`), or `fallback`. */
export function color(value, fallback) {
  return typeof value === 'string' && /^#[0-9a-fA-F]{6}$/.test(value) ? value : fallback;
}

/** The plain text of an Instant JSON text (`{format, value}` or, in version 1, a string). */
export function plainText(text) {
  if (typeof text === 'string') return text;
  if (!text || typeof text.value !== 'string') return '';
  if (text.format !== 'xhtml') return text.value;
  // Parsed as an inert document (no scripts run, nothing loads); only its text is kept.
  const parsed = new DOMParser().parseFromString(text.value, 'text/html');
  for (const element of parsed.querySelectorAll('script, style')) element.remove();
  return parsed.body?.textContent ?? '';
}

function element(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  return node;
}

/** The path of a list of points: `M x y L x y …`. */
function pathData(points, close = false) {
  const valid = (Array.isArray(points) ? points : []).map(point).filter(Boolean);
  if (valid.length === 0) return '';
  let data = `M${valid[0][0]} ${valid[0][1]}`;
  if (valid.length === 1) data += `l0.01 0`;
  for (const [x, y] of valid.slice(1)) data += `L${x} ${y}`;
  return close ? `${data}Z` : data;
}

/** The human name of an annotation type (`pspdfkit/shape/ellipse` → `Ellipse`). */
export function typeName(type) {
  const names = {
    'pspdfkit/ink': 'Ink',
    'pspdfkit/note': 'Note',
    'pspdfkit/text': 'Free text',
    'pspdfkit/markup/highlight': 'Highlight',
    'pspdfkit/markup/underline': 'Underline',
    'pspdfkit/markup/strikeout': 'Strikeout',
    'pspdfkit/markup/squiggly': 'Squiggly',
    'pspdfkit/markup/redaction': 'Redaction',
    'pspdfkit/shape/rectangle': 'Rectangle',
    'pspdfkit/shape/ellipse': 'Ellipse',
    'pspdfkit/shape/line': 'Line',
    'pspdfkit/shape/polyline': 'Polyline',
    'pspdfkit/shape/polygon': 'Polygon',
    'pspdfkit/stamp': 'Stamp',
    'pspdfkit/image': 'Image',
    'pspdfkit/link': 'Link',
    'pspdfkit/widget': 'Form field',
    'pspdfkit/comment-marker': 'Comment',
  };
  return names[type] ?? (typeof type === 'string' ? type : 'Annotation');
}

/** The stamp types of the format and their labels. */
const STAMP_LABELS = {
  Accepted: 'Accepted', Approved: 'Approved', AsIs: 'As Is', Completed: 'Completed', Confidential: 'Confidential',
  Departmental: 'Departmental', Draft: 'Draft', Experimental: 'Experimental', Expired: 'Expired', Final: 'Final',
  ForComment: 'For Comment', ForPublicRelease: 'For Public Release', InformationOnly: 'Information Only',
  InitialHere: 'Initial Here', NotApproved: 'Not Approved', NotForPublicRelease: 'Not For Public Release',
  PreliminaryResults: 'Preliminary Results', Rejected: 'Rejected', Revised: 'Revised', SignHere: 'Sign Here',
  Sold: 'Sold', TopSecret: 'Top Secret', Void: 'Void', Witness: 'Witness',
};

/**
 * Draws one annotation: an SVG `<g>` with `data-record-id` holding a transparent rectangle over
 * its bounding box (what the pointer picks in the select tool) and its drawing; `null` for a record
 * that is not a drawable annotation.
 * @param {{id: string, content: object}} record
 * @param {(sha256: string) => Promise<string>} imageURL an object URL of an image attachment.
 */
export function drawAnnotation(record, imageURL) {
  const content = record.content;
  const bbox = rect(content?.bbox);
  if (!bbox || typeof content.type !== 'string') return null;
  const [left, top, width, height] = bbox;
  const group = element('g', { 'data-record-id': record.id, 'data-type': content.type });
  group.classList.add('record');
  if (record.pending) group.classList.add('pending');
  const opacity = number(content.opacity, 1);
  if (opacity < 1) group.setAttribute('opacity', String(Math.max(0, opacity)));
  group.append(element('rect', { x: left, y: top, width, height, class: 'hit' }));
  const drawing = drawContent(content, bbox, record, imageURL);
  if (!drawing) return null;
  const rotation = number(content.rotation, 0);
  if ([90, 180, 270].includes(rotation) && content.type !== 'pspdfkit/ink') {
    // Rotated content fills the bounding box turned back: draw it unrotated in the box with its
    // sides swapped for 90 and 270, then turn it counterclockwise about the centre.
    drawing.setAttribute('transform', `rotate(${-rotation} ${left + width / 2} ${top + height / 2})`);
  }
  group.append(drawing);
  return group;
}

/** The box of rotated content: the bounding box with its sides swapped for 90° and 270°. */
function contentBox(content, bbox) {
  const [left, top, width, height] = bbox;
  if (![90, 270].includes(number(content.rotation, 0))) return bbox;
  return [left + (width - height) / 2, top + (height - width) / 2, height, width];
}

function drawContent(content, bbox, record, imageURL) {
  const [left, top, width, height] = bbox;
  const stroke = (fallback) => color(content.strokeColor, fallback);
  const strokeWidth = Math.max(0, number(content.strokeWidth, 1));
  const dash = Array.isArray(content.strokeDashArray)
    ? content.strokeDashArray.map((entry) => Math.max(0, number(entry, 0))).join(' ')
    : undefined;
  const shape = (tag, attributes) =>
    element(tag, {
      ...attributes,
      fill: color(content.fillColor, 'none'),
      stroke: stroke('#2563eb'),
      'stroke-width': strokeWidth,
      'stroke-dasharray': dash || undefined,
      'stroke-linejoin': 'round',
      'stroke-linecap': 'round',
    });
  switch (content.type) {
    case 'pspdfkit/ink': {
      const lines = Array.isArray(content.lines?.points) ? content.lines.points : [];
      const data = lines.map((line) => pathData(line)).join('');
      const group = element('g');
      const background = color(content.backgroundColor, null);
      if (background) group.append(element('rect', { x: left, y: top, width, height, fill: background }));
      group.append(
        element('path', {
          d: data,
          fill: 'none',
          stroke: stroke('#000000'),
          'stroke-width': Math.max(0.1, number(content.lineWidth, 2)),
          'stroke-linecap': 'round',
          'stroke-linejoin': 'round',
        }),
      );
      return group;
    }
    case 'pspdfkit/markup/highlight':
    case 'pspdfkit/markup/underline':
    case 'pspdfkit/markup/strikeout':
    case 'pspdfkit/markup/squiggly': {
      const rects = (Array.isArray(content.rects) ? content.rects : [bbox]).map(rect).filter(Boolean);
      const group = element('g');
      const markColor = color(content.color, '#f5d000');
      for (const [x, y, w, h] of rects) {
        if (content.type === 'pspdfkit/markup/highlight') {
          group.append(element('rect', { x, y, width: w, height: h, fill: markColor, class: 'highlight-rect' }));
        } else if (content.type === 'pspdfkit/markup/squiggly') {
          const amplitude = Math.max(0.5, h * 0.06);
          const step = amplitude * 2;
          let data = `M${x} ${y + h - amplitude}`;
          for (let at = x + step, up = true; at <= x + w + 0.001; at += step, up = !up) {
            data += `L${at} ${y + h - (up ? 0 : amplitude * 2) - amplitude / 2}`;
          }
          group.append(element('path', { d: data, fill: 'none', stroke: markColor, 'stroke-width': amplitude }));
        } else {
          const lineY = content.type === 'pspdfkit/markup/underline' ? y + h * 0.92 : y + h / 2;
          group.append(
            element('line', { x1: x, y1: lineY, x2: x + w, y2: lineY, stroke: markColor, 'stroke-width': Math.max(0.5, h * 0.07) }),
          );
        }
      }
      return group;
    }
    case 'pspdfkit/markup/redaction': {
      const rects = (Array.isArray(content.rects) && content.rects.length ? content.rects : [bbox]).map(rect).filter(Boolean);
      const group = element('g', { class: 'redaction' });
      for (const [x, y, w, h] of rects) {
        group.append(
          element('rect', { x, y, width: w, height: h, fill: 'none', stroke: color(content.outlineColor, '#dc2626'), 'stroke-width': 1.5 }),
        );
      }
      return group;
    }
    case 'pspdfkit/shape/rectangle':
      return shape('rect', {
        x: left + strokeWidth / 2,
        y: top + strokeWidth / 2,
        width: Math.max(0, width - strokeWidth),
        height: Math.max(0, height - strokeWidth),
      });
    case 'pspdfkit/shape/ellipse':
      return shape('ellipse', {
        cx: left + width / 2,
        cy: top + height / 2,
        rx: Math.max(0, width / 2 - strokeWidth / 2),
        ry: Math.max(0, height / 2 - strokeWidth / 2),
      });
    case 'pspdfkit/shape/line': {
      const start = point(content.startPoint);
      const end = point(content.endPoint);
      if (!start || !end) return null;
      const group = element('g');
      group.append(shape('path', { d: pathData([start, end]) }));
      const caps = content.lineCaps ?? {};
      for (const [cap, tip, from] of [[caps.start, start, end], [caps.end, end, start]]) {
        if (typeof cap === 'string' && /arrow/i.test(cap)) group.append(arrowHead(tip, from, strokeWidth, stroke('#2563eb'), /closed/i.test(cap)));
      }
      return group;
    }
    case 'pspdfkit/shape/polyline':
      return shape('path', { d: pathData(content.points) });
    case 'pspdfkit/shape/polygon':
      return shape('path', { d: pathData(content.points, true) });
    case 'pspdfkit/note':
    case 'pspdfkit/comment-marker': {
      const group = element('g', { class: 'note-icon' });
      const size = Math.min(width, height);
      const x = left + (width - size) / 2;
      const y = top + (height - size) / 2;
      const fill = color(content.color, '#fcd34d');
      group.append(
        element('path', {
          d: `M${x} ${y}h${size}v${size * 0.75}l${-size * 0.25} ${size * 0.25}h${-size * 0.75}Z`,
          fill,
          stroke: '#78350f',
          'stroke-width': size / 24,
        }),
      );
      for (const line of [0.3, 0.5, 0.7]) {
        group.append(
          element('line', { x1: x + size * 0.2, x2: x + size * 0.8, y1: y + size * line, y2: y + size * line, stroke: '#78350f', 'stroke-width': size / 24 }),
        );
      }
      return group;
    }
    case 'pspdfkit/text': {
      const [x, y, w, h] = contentBox(content, bbox);
      const object = element('foreignObject', { x, y, width: w, height: h });
      const box = document.createElement('div');
      box.className = 'free-text';
      box.textContent = plainText(content.text);
      box.style.fontSize = `${Math.min(500, Math.max(1, number(content.fontSize, 12)))}px`;
      box.style.color = color(content.fontColor, '#000000');
      const background = color(content.backgroundColor, null);
      if (background) box.style.backgroundColor = background;
      if (typeof content.font === 'string' && /^[\w \-]{1,64}$/.test(content.font)) box.style.fontFamily = `"${content.font}", sans-serif`;
      if (['left', 'center', 'right'].includes(content.horizontalAlign)) box.style.textAlign = content.horizontalAlign;
      const styles = Array.isArray(content.fontStyle) ? content.fontStyle : [];
      if (styles.includes('bold')) box.style.fontWeight = 'bold';
      if (styles.includes('italic')) box.style.fontStyle = 'italic';
      object.append(box);
      return object;
    }
    case 'pspdfkit/stamp': {
      const [x, y, w, h] = contentBox(content, bbox);
      const fallback = /Rejected|NotApproved|Void|Expired/.test(content.stampType) ? '#dc2626'
        : /Approved|Accepted|Completed|Final/.test(content.stampType) ? '#16a34a' : '#2563eb';
      const stampColor = color(content.color, fallback);
      const group = element('g', { class: 'stamp' });
      const border = Math.max(1, Math.min(w, h) * 0.06);
      group.append(
        element('rect', { x: x + border / 2, y: y + border / 2, width: Math.max(0, w - border), height: Math.max(0, h - border), rx: border * 2, fill: 'none', stroke: stampColor, 'stroke-width': border }),
      );
      const label = typeof content.title === 'string' && content.title ? content.title
        : STAMP_LABELS[content.stampType] ?? String(content.stampType ?? 'Stamp');
      const text = element('text', {
        x: x + w / 2,
        y: y + h / 2,
        fill: stampColor,
        'font-size': Math.max(1, h * 0.45),
        'text-anchor': 'middle',
        'dominant-baseline': 'central',
        textLength: Math.max(1, w * 0.86),
        lengthAdjust: 'spacingAndGlyphs',
        class: 'stamp-text',
      });
      text.textContent = label.toUpperCase();
      group.append(text);
      return group;
    }
    case 'pspdfkit/image': {
      const [x, y, w, h] = contentBox(content, bbox);
      const image = element('image', { x, y, width: w, height: h, preserveAspectRatio: 'none' });
      const sha = content.imageAttachmentId;
      if (typeof sha === 'string' && /^[0-9a-f]{64}$/.test(sha)) {
        imageURL(sha).then((url) => image.setAttribute('href', url)).catch(() => image.classList.add('missing'));
      }
      const group = element('g');
      group.append(element('rect', { x, y, width: w, height: h, class: 'image-frame' }), image);
      return group;
    }
    case 'pspdfkit/link':
      return element('rect', { x: left, y: top, width, height, class: 'link', stroke: color(content.borderColor, '#2563eb') });
    case 'pspdfkit/widget':
      return element('rect', { x: left, y: top, width, height, class: 'widget' });
    default:
      return null;
  }
}

/** An arrow head at `tip`, pointing away from `from`. */
function arrowHead(tip, from, width, strokeColor, closed) {
  const angle = Math.atan2(tip[1] - from[1], tip[0] - from[0]);
  const length = Math.max(6, width * 4);
  const wing = (side) => [
    tip[0] - length * Math.cos(angle + side * 0.45),
    tip[1] - length * Math.sin(angle + side * 0.45),
  ];
  const [a, b] = [wing(1), wing(-1)];
  return element('path', {
    d: `M${a[0]} ${a[1]}L${tip[0]} ${tip[1]}L${b[0]} ${b[1]}${closed ? 'Z' : ''}`,
    fill: closed ? strokeColor : 'none',
    stroke: strokeColor,
    'stroke-width': width,
    'stroke-linejoin': 'round',
  });
}

/**
 * Keeps each page's annotation layer equal to the client's annotation records: draws a page's
 * records once its size is known, and redraws the records each change names.
 */
export class AnnotationLayer {
  /**
   * @param {import('./pdf-pages.js').PDFPages} pages
   * @param {import('./instant-client.js').InstantClient} client
   */
  constructor(pages, client) {
    this.pages = pages;
    this.client = client;
    this.elements = new Map();
    this.images = new Map();
    pages.addEventListener('pageready', (event) => this.drawPage(event.detail.index));
    client.addEventListener('change', (event) => this.update(event.detail.ids));
  }

  /** An object URL of an image attachment, fetched once. */
  imageURL(sha256) {
    if (!this.images.has(sha256)) {
      this.images.set(sha256, this.client.attachment(sha256).then((blob) => URL.createObjectURL(blob)));
    }
    return this.images.get(sha256);
  }

  /** Draws every annotation of a page. */
  drawPage(index) {
    const fragment = document.createDocumentFragment();
    for (const record of this.client.records('annotation')) {
      if (record.content?.pageIndex !== index || this.elements.has(record.id)) continue;
      const drawn = drawAnnotation(record, (sha) => this.imageURL(sha));
      if (!drawn) continue;
      this.elements.set(record.id, drawn);
      fragment.append(drawn);
    }
    this.pages.pages[index].records.append(fragment);
  }

  /** Redraws the named records (drawing, moving between pages, removing). */
  update(ids) {
    for (const id of ids) {
      const record = this.client.get(id);
      const old = this.elements.get(id);
      if (!record || record.kind !== 'annotation') {
        old?.remove();
        this.elements.delete(id);
        continue;
      }
      const page = this.pages.pages[record.content?.pageIndex];
      if (!page?.pdfPage) {
        old?.remove();
        this.elements.delete(id);
        continue;
      }
      const drawn = drawAnnotation(record, (sha) => this.imageURL(sha));
      if (!drawn) {
        old?.remove();
        this.elements.delete(id);
        continue;
      }
      if (old && old.parentNode === page.records) old.replaceWith(drawn);
      else {
        old?.remove();
        page.records.append(drawn);
      }
      this.elements.set(id, drawn);
    }
    this.pages.dispatchEvent(new CustomEvent('annotationschanged', { detail: { ids } }));
  }
}
