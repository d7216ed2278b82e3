extension PDFDocument {
    /// The text of a page: its lines and words with their positions.
    ///
    /// Text comes from the page's content streams and the form XObjects they draw, in the order
    /// they show it; annotations are not part of it. A character's text is what the font's
    /// `/ToUnicode` map says, else what its encoding names; characters without either are left
    /// out. Broken parts of the page (a font that cannot be read, a damaged stream) leave out what
    /// they hold and are listed in ``PDFPageText/warnings``.
    ///
    /// - Throws: ``PDFError`` with ``PDFError/Code/limitExceeded`` when the document's decode
    ///   budget runs out, and with ``PDFError/Code/noSuchPage`` for an index outside the document.
    public func text(ofPage index: Int) throws(PDFError) -> PDFPageText {
        guard pages.indices.contains(index) else {
            throw PDFError(
                .noSuchPage, "page \(index) does not exist: the document has \(pageCount) pages (indexes from 0)")
        }
        return try text(ofPages: index..<index + 1)[0]
    }

    /// The text of several pages, with each font read once.
    public func text(ofPages range: Range<Int>) throws(PDFError) -> [PDFPageText] {
        let fonts = TextFontCache()
        var texts: [PDFPageText] = []
        for index in range.clamped(to: pages.indices) {
            var extractor = TextExtractor(document: self, page: pages[index], fonts: fonts)
            try extractor.run()
            var collector = extractor.collector
            texts.append(PDFPageText(pageIndex: index, lines: collector.lines(), warnings: extractor.warnings))
        }
        return texts
    }
}
