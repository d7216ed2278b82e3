import Foundation

extension TestPDF {
    /// A one-page PDF encrypted by the standard security handler (AES-128, revision 4) whose
    /// `/O` and `/U` entries match no password: what a reader that is not given the user password
    /// sees of a password-protected file. No password opens it, so a reader can only refuse it as
    /// encrypted.
    public static func passwordProtected() -> Data {
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
            "<< >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> >>",
            """
            << /Filter /Standard /V 4 /R 4 /Length 128 /P -1028
               /CF << /StdCF << /CFM /AESV2 /AuthEvent /DocOpen /Length 16 >> >> /StmF /StdCF /StrF /StdCF
               /O <\(String(repeating: "a5", count: 32))> /U <\(String(repeating: "5a", count: 32))> >>
            """,
        ]
        return assemble(
            objects.map { Data($0.utf8) }, trailer: "/Root 1 0 R /Info 3 0 R /Encrypt 5 0 R /ID \(identifier(seed: 19))"
        )
    }
}
