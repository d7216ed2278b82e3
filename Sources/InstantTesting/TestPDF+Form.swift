import Foundation

extension TestPDF {
    /// A one-page PDF (300 × 300 points) with an AcroForm of two text fields in Helvetica 12: `Text Box`
    /// at `/Rect [100 100 200 130]`, empty and without an appearance stream, then `Filled Box` at
    /// `/Rect [100 200 200 230]` with the value `Filled in`.
    public static func form() -> Data {
        let field = "/Type /Annot /Subtype /Widget /FT /Tx /P 4 0 R /F 4 /DA (/Helv 12 Tf 0 g)"
        let objects = [
            """
            << /Type /Catalog /Pages 2 0 R
               /AcroForm << /Fields [5 0 R 6 0 R] /DR << /Font << /Helv 7 0 R >> >> /DA (/Helv 0 Tf 0 g) >> >>
            """,
            "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
            "<< /Title (Form test page) >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Resources << >> /Annots [5 0 R 6 0 R] >>",
            "<< \(field) /T (Text Box) /Rect [100 100 200 130] >>",
            "<< \(field) /T (Filled Box) /Rect [100 200 200 230] /V (Filled in) >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        ]
        return assemble(objects.map { Data($0.utf8) }, trailer: "/Root 1 0 R /Info 3 0 R /ID \(identifier(seed: 17))")
    }
}
