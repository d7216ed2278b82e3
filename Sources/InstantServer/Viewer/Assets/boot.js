// Runs before pdf.js while the page loads: starts pdf.js's worker at once, so that the browser
// fetches and compiles its large script on another thread while pdf.js and the viewer's modules
// load on this one. The viewer hands it to pdf.js (`GlobalWorkerOptions.workerPort`).
globalThis.openInstantPDFWorker = new Worker('/viewer/pdfjs/build/pdf.worker.js');
