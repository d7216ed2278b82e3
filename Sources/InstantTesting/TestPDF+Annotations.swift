import Foundation

extension TestPDF {
    /// A one-page US Letter PDF whose `/Annots` holds, in this order: a note (object 5, with the
    /// author `Ada`, the text `A note on the page` and a popup), its popup (object 6, folded into
    /// the note by readers), a highlight written directly into `/Annots` (no object number, so
    /// Instant JSON gives it the positional id `p0a2`) with the note `Highlight comment`, and an
    /// ink drawing (object 7) with the note `Hello world!`.
    ///
    /// As Instant JSON records: `pspdfkit/note` `5`, `pspdfkit/markup/highlight` `p0a2` and
    /// `pspdfkit/ink` `7`, with `pdfObjectId` 5, none and 7.
    public static func annotated() -> Data {
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
            "<< /Title (Annotated test page) >>",
            """
            << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 8 0 R
               /Annots [5 0 R 6 0 R
                 << /Type /Annot /Subtype /Highlight /Rect [72 640 272 660] /F 4 /C [1 1 0] /T (Ada)
                    /QuadPoints [72 660 272 660 72 640 272 640] /Contents (Highlight comment) >>
                 7 0 R] >>
            """,
            """
            << /Type /Annot /Subtype /Text /Rect [72 700 96 724] /F 4 /C [1 1 0] /T (Ada) /Name /Comment
               /NM (note-1) /M (D:20261120101112Z) /Contents (A note on the page) /Popup 6 0 R >>
            """,
            "<< /Type /Annot /Subtype /Popup /Rect [100 600 300 700] /Parent 5 0 R >>",
            """
            << /Type /Annot /Subtype /Ink /Rect [300 400 400 500] /F 4 /C [1 0 0] /BS << /W 2 >> /T (Ada)
               /InkList [[310 410 350 490 390 410]] /Contents (Hello world!) >>
            """,
            stream("0 0 1 RG 72 760 m 540 760 l S"),
        ]
        return assemble(objects.map { Data($0.utf8) }, trailer: "/Root 1 0 R /Info 3 0 R /ID \(identifier(seed: 13))")
    }
}
