import Foundation

extension TestPDF {
    /// Two pages with labels `i` and `A-5`, an outline whose last item points back at the first
    /// (a loop), an information dictionary and a trim box.
    public static func outlined() -> Data {
        assemble(
            [
                Data(
                    "<< /Type /Catalog /Pages 2 0 R /Outlines 4 0 R /PageLabels << /Nums [0 << /S /r >> 1 << /S /D /P (A-) /St 5 >>] >> >>"
                        .utf8),
                Data("<< /Type /Pages /Kids [3 0 R 8 0 R] /Count 2 >>".utf8),
                Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /TrimBox [10 10 602 782] >>".utf8),
                Data("<< /Type /Outlines /First 5 0 R /Last 6 0 R /Count 2 >>".utf8),
                Data(
                    "<< /Title (Chapter 1) /Parent 4 0 R /Next 6 0 R /Dest [3 0 R /Fit] /First 7 0 R /Last 7 0 R /Count 1 /F 2 /C [1 0 0] >>"
                        .utf8),
                Data(
                    "<< /Title (Web) /Parent 4 0 R /Prev 5 0 R /A << /S /URI /URI (https://example.com) >> /Next 5 0 R >>"
                        .utf8),
                Data("<< /Title (Section 1.1) /Parent 5 0 R /Dest [8 0 R /XYZ 0 0 0] /F 1 >>".utf8),
                Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Rotate 90 >>".utf8),
                Data("<< /Title (Outlined) /Author (Ada) /CreationDate (D:20260101120000Z) /Producer (hand) >>".utf8),
            ],
            trailer: "/Root 1 0 R /Info 9 0 R /ID [<01> <02>]")
    }
}
