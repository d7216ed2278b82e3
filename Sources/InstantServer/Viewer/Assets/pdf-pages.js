// The pages of a PDF, drawn with pdf.js: one box per page at its size, a canvas and a text layer
// drawn only for pages near the screen (and dropped again for pages far from it), zoom and fit to
// width. pdf.js draws the page content only; the PDF's annotations are records and the annotation
// layer draws them (see annotation-drawing.js).

/** CSS pixels per PDF point at 100 %: pdf.js's and the browsers' convention (96 dpi over 72). */
export const CSS_PIXELS_PER_POINT = 96 / 72;
export const MIN_ZOOM = 0.25;
export const MAX_ZOOM = 5;

const SVG = 'http://www.w3.org/2000/svg';

/** One page: its box, canvas, text layer and annotation layer (an SVG in page coordinates). */
class Page {
  constructor(index, pages) {
    this.index = index;
    this.pages = pages;
    this.pdfPage = null;
    this.rendered = 0;
    this.rendering = null;
    this.renderTask = null;
    this.textTask = null;
    this.div = document.createElement('div');
    this.div.className = 'page';
    this.div.dataset.pageIndex = String(index);
    this.canvas = null;
    this.textLayer = document.createElement('div');
    this.textLayer.className = 'textLayer';
    this.svg = document.createElementNS(SVG, 'svg');
    this.svg.classList.add('annotation-layer');
    this.svg.dataset.pageIndex = String(index);
    this.content = document.createElementNS(SVG, 'g');
    this.content.classList.add('page-content');
    this.records = document.createElementNS(SVG, 'g');
    this.records.classList.add('records');
    this.overlay = document.createElementNS(SVG, 'g');
    this.overlay.classList.add('overlay');
    this.content.append(this.records, this.overlay);
    this.svg.append(this.content);
    this.div.append(this.textLayer, this.svg);
  }

  /** pdf.js's viewport of the page at the current zoom: its size in CSS pixels, its transform from PDF space. */
  get viewport() {
    return this.pdfPage?.getViewport({ scale: this.pages.zoom * CSS_PIXELS_PER_POINT });
  }

  /**
   * The matrix `[a, b, c, d, e, f]` from Instant JSON page coordinates (points from the top left
   * of the unrotated crop box) to this page's CSS pixels, rotation included.
   */
  get matrix() {
    const viewport = this.viewport;
    if (!viewport) return null;
    const [a, b, c, d, e, f] = viewport.transform;
    const [x0, , , y1] = this.pdfPage.view;
    // Page point (x, y) is PDF user space (x + x0, y1 - y); the viewport maps user space to pixels.
    return [a, b, -c, -d, a * x0 + c * y1 + e, b * x0 + d * y1 + f];
  }

  /** Sizes the box and the layers for the current zoom. */
  layout(fallback) {
    const viewport = this.viewport ?? fallback;
    if (!viewport) return;
    this.div.style.width = `${viewport.width}px`;
    this.div.style.height = `${viewport.height}px`;
    this.div.dataset.scale = String(this.pages.zoom * CSS_PIXELS_PER_POINT);
    this.svg.setAttribute('width', String(viewport.width));
    this.svg.setAttribute('height', String(viewport.height));
    const matrix = this.matrix;
    if (matrix) this.content.setAttribute('transform', `matrix(${matrix.join(' ')})`);
  }

  /** Converts a pointer position (client pixels) to page points. */
  toPage(clientX, clientY) {
    const matrix = this.matrix;
    const box = this.svg.getBoundingClientRect();
    const [a, b, c, d, e, f] = matrix;
    const x = clientX - box.left - e;
    const y = clientY - box.top - f;
    const determinant = a * d - b * c;
    return [(d * x - c * y) / determinant, (-b * x + a * y) / determinant];
  }

  /** Converts a rectangle in client pixels to page points `[left, top, width, height]`. */
  rectToPage(rect) {
    const [x1, y1] = this.toPage(rect.left, rect.top);
    const [x2, y2] = this.toPage(rect.right, rect.bottom);
    return [Math.min(x1, x2), Math.min(y1, y2), Math.abs(x2 - x1), Math.abs(y2 - y1)];
  }

  /**
   * Draws the canvas at the current zoom (once per zoom, one drawing at a time); resolves when the
   * page shows, and the text layer is drawn after.
   */
  render(pdfjs) {
    if (this.rendered === this.pages.zoom) return Promise.resolve();
    this.rendering ??= this.#draw(pdfjs).finally(() => {
      this.rendering = null;
    });
    return this.rendering;
  }

  async #draw(pdfjs) {
    const zoom = this.pages.zoom;
    if (!this.pdfPage) await this.pages.loadPage(this.index);
    const viewport = this.viewport;
    const canvas = document.createElement('canvas');
    canvas.className = 'page-canvas';
    const ratio = Math.min(globalThis.devicePixelRatio || 1, 2);
    canvas.width = Math.floor(viewport.width * ratio);
    canvas.height = Math.floor(viewport.height * ratio);
    canvas.style.width = `${viewport.width}px`;
    canvas.style.height = `${viewport.height}px`;
    const context = canvas.getContext('2d', { alpha: false });
    this.renderTask = this.pdfPage.render({
      canvasContext: context,
      viewport,
      transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0],
      annotationMode: pdfjs.AnnotationMode.DISABLE,
    });
    try {
      await this.renderTask.promise;
    } catch (error) {
      this.renderTask = null;
      if (error?.name !== 'RenderingCancelledException') throw error;
      return;
    }
    this.renderTask = null;
    if (this.pages.zoom !== zoom) {
      this.pages.schedule();
      return;
    }
    this.canvas?.remove();
    this.canvas = canvas;
    this.div.prepend(canvas);
    this.rendered = zoom;
    this.div.dataset.rendered = 'true';
    this.pages.dispatchEvent(new CustomEvent('pagerendered', { detail: { index: this.index } }));
    // The page shows now; its text (for selecting) follows. A page without text stays usable.
    this.renderText(pdfjs, viewport).catch(() => {});
  }

  async renderText(pdfjs, viewport) {
    this.textTask?.cancel();
    const content = await this.pdfPage.getTextContent();
    if (this.pages.zoom !== this.rendered) return;
    this.textLayer.replaceChildren();
    this.textLayer.style.width = `${viewport.width}px`;
    this.textLayer.style.height = `${viewport.height}px`;
    this.textTask = pdfjs.renderTextLayer({ textContent: content, container: this.textLayer, viewport, textDivs: [] });
    try {
      await this.textTask.promise;
      this.div.dataset.textLayer = 'true';
    } catch {
      // Cancelled by a newer zoom.
    }
  }

  /** Frees the canvas and text layer of a page far from the screen. */
  release() {
    this.renderTask?.cancel();
    this.renderTask = null;
    this.textTask?.cancel();
    if (this.canvas) {
      this.canvas.width = 0;
      this.canvas.height = 0;
      this.canvas.remove();
      this.canvas = null;
    }
    this.textLayer.replaceChildren();
    this.rendered = 0;
    delete this.div.dataset.rendered;
    delete this.div.dataset.textLayer;
  }
}

/**
 * The pages of a document in a scrolling container. Events: `pagerendered` (`detail.index`),
 * `pageready` (a page's size and matrix are known: `detail.index`), `zoom` (`detail.zoom`).
 */
export class PDFPages extends EventTarget {
  /**
   * @param {HTMLElement} scroller the scrolling element.
   * @param {object} pdfDocument pdf.js's document.
   * @param {object} pdfjs the pdf.js library (`pdfjsLib`).
   */
  constructor(scroller, pdfDocument, pdfjs) {
    super();
    this.scroller = scroller;
    this.pdfDocument = pdfDocument;
    this.pdfjs = pdfjs;
    this.zoom = 1;
    this.pages = [];
    this.visible = new Set();
    this.near = new Set();
    this.fallbackViewport = null;
    this.loading = new Map();
    this.timer = null;
    this.container = document.createElement('div');
    this.container.className = 'pages';
    scroller.append(this.container);
  }

  /**
   * Creates a box for every page (sized like the first until each is loaded) and draws the first.
   * @param {number|'page-width'} zoom the zoom to start at (1 is 100 %), or the zoom that fits the
   *   first page's width to the screen.
   */
  async open(zoom) {
    const first = await this.pdfDocument.getPage(1);
    if (zoom === 'page-width') {
      const width = first.getViewport({ scale: CSS_PIXELS_PER_POINT }).width;
      zoom = (this.scroller.clientWidth - 32) / width;
    }
    this.zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, Number(zoom) || 1));
    for (let index = 0; index < this.pdfDocument.numPages; index += 1) {
      const page = new Page(index, this);
      this.pages.push(page);
      this.container.append(page.div);
    }
    this.#adopt(0, first);
    this.fallbackViewport = first.getViewport({ scale: this.zoom * CSS_PIXELS_PER_POINT });
    for (const page of this.pages) page.layout(this.fallbackViewport);
    this.visibility = new IntersectionObserver((entries) => this.#observed(entries, this.visible), {
      root: this.scroller,
    });
    this.nearness = new IntersectionObserver((entries) => this.#observed(entries, this.near), {
      root: this.scroller,
      rootMargin: '150% 0px',
    });
    for (const page of this.pages) {
      this.visibility.observe(page.div);
      this.nearness.observe(page.div);
    }
    await this.pages[0].render(this.pdfjs);
  }

  #adopt(index, pdfPage) {
    const page = this.pages[index];
    page.pdfPage = pdfPage;
    page.layout();
    this.dispatchEvent(new CustomEvent('pageready', { detail: { index } }));
  }

  /** Loads a page's pdf.js object (its size and matrix) once. */
  loadPage(index) {
    if (this.pages[index].pdfPage) return Promise.resolve();
    if (!this.loading.has(index)) {
      this.loading.set(
        index,
        this.pdfDocument.getPage(index + 1).then((pdfPage) => this.#adopt(index, pdfPage)),
      );
    }
    return this.loading.get(index);
  }

  #observed(entries, set) {
    for (const entry of entries) {
      const index = Number(entry.target.dataset.pageIndex);
      if (entry.isIntersecting) set.add(index);
      else set.delete(index);
    }
    this.schedule();
  }

  /** Draws the pages near the screen (those on it first) and frees the others, soon. */
  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.#update(), 30);
  }

  async #update() {
    for (const page of this.pages) {
      if (!this.near.has(page.index) && page.rendered) page.release();
    }
    const order = [...this.visible].sort((a, b) => a - b);
    for (const index of [...this.near].sort((a, b) => a - b)) if (!order.includes(index)) order.push(index);
    for (const index of order) {
      await this.loadPage(index);
      await this.pages[index].render(this.pdfjs);
    }
  }

  /**
   * Sets the zoom (1 is 100 %), keeping the point at the middle of the screen in place.
   * @param {number} zoom
   */
  setZoom(zoom) {
    const next = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom));
    if (next === this.zoom) return;
    const ratio = next / this.zoom;
    const middleX = this.scroller.scrollLeft + this.scroller.clientWidth / 2;
    const middleY = this.scroller.scrollTop + this.scroller.clientHeight / 2;
    this.zoom = next;
    this.fallbackViewport = this.pages[0].pdfPage.getViewport({ scale: next * CSS_PIXELS_PER_POINT });
    for (const page of this.pages) {
      page.layout(this.fallbackViewport);
      page.renderTask?.cancel();
    }
    this.scroller.scrollLeft = middleX * ratio - this.scroller.clientWidth / 2;
    this.scroller.scrollTop = middleY * ratio - this.scroller.clientHeight / 2;
    this.dispatchEvent(new CustomEvent('zoom', { detail: { zoom: next } }));
    this.schedule();
  }

  /** Zooms so that the widest page fills the width of the screen. */
  fitWidth() {
    const widths = this.pages
      .filter((page) => page.pdfPage)
      .map((page) => page.pdfPage.getViewport({ scale: CSS_PIXELS_PER_POINT }).width);
    this.setZoom((this.scroller.clientWidth - 32) / Math.max(...widths));
  }

  /** Scrolls a page into view. */
  scrollToPage(index) {
    this.pages[index]?.div.scrollIntoView({ block: 'start' });
  }
}
