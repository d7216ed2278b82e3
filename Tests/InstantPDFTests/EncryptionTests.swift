import Foundation
import InstantJSON
import Testing

@testable import InstantPDF

@Suite("Encrypted files", .heavyWork)
struct EncryptionTests {
    /// Files qpdf opened with the empty password open here too, with the same page count; files
    /// qpdf could not open without a password fail with `passwordRequired`.
    @Test(.corpus) func corpusEncryptedFiles() throws {
        var problems: [String] = []
        var opened = 0
        for entry in Corpus.entries where entry.encrypted == true || entry.open == "password" {
            let data = try Corpus.data(entry)
            do {
                let document = try PDFDocument(data: data)
                opened += 1
                if entry.open == "password" {
                    problems.append("\(entry.path): opened without a password, qpdf needed one")
                } else if let pages = entry.pages, document.pageCount != pages {
                    problems.append("\(entry.path): \(document.pageCount) pages, qpdf says \(pages)")
                }
                // Decrypted strings read as text: every record is valid Instant JSON.
                let problemsOfRecords = InstantDocumentJSON.decodeProblems(document.originalRecords())
                if !problemsOfRecords.isEmpty { problems.append("\(entry.path): \(problemsOfRecords)") }
            } catch {
                if entry.open == "password" {
                    if error.code != .passwordRequired {
                        problems.append("\(entry.path): \(error), expected passwordRequired")
                    }
                } else {
                    problems.append("\(entry.path): \(error), qpdf opened it")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        #expect(opened > 5)
    }

    /// A file encrypted with a user password opens with it or with the owner password, never
    /// without a password or with a wrong one; its strings and streams read decrypted.
    @Test(arguments: EncryptedFixtures.Method.allCases)
    func userAndOwnerPasswords(method: EncryptedFixtures.Method) throws {
        let data = try EncryptedFixtures.make(method, userPassword: "user-secret", ownerPassword: "owner-secret")
        for password in ["", "wrong"] {
            #expect {
                try PDFDocument(data: data, password: password)
            } throws: { error in
                (error as? PDFError)?.code == .passwordRequired
            }
        }
        for password in ["user-secret", "owner-secret"] {
            let document = try PDFDocument(data: data, password: password)
            #expect(document.pageCount == 1)
            let info = try #require(document.resolve(document.trailer["Info"] ?? .null).dictionaryValue)
            #expect(info["Title"]?.stringData == Data(EncryptedFixtures.title.utf8))
            let contents = try #require(document.resolve(document.pages[0].dictionary["Contents"] ?? .null).streamValue)
            #expect(try document.decodedData(of: contents) == Data(EncryptedFixtures.content.utf8))
        }
    }

    /// The pypdf files that need their user password (`asdfzxcv`, from pypdf's test suite).
    @Test(
        .corpus,
        arguments: [
            "r2-user-password.pdf", "r3-user-password.pdf", "r4-user-password.pdf", "r4-aes-user-password.pdf",
        ])
    func userPasswords(name: String) throws {
        let data = try Data(contentsOf: Corpus.directory.appendingPathComponent("pypdf/resources/encryption/\(name)"))
        #expect(throws: PDFError.self) { try PDFDocument(data: data) }
        #expect(throws: PDFError.self) { try PDFDocument(data: data, password: "wrong") }
        let document = try PDFDocument(data: data, password: "asdfzxcv")
        #expect(document.pageCount == 1)
    }
}
