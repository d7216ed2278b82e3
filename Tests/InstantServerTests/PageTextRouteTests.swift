import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// `pages/{i}/text`, `pages/text` and `search`, against a live server.
@Suite("Page text and search routes", .timeLimit(.minutes(10)))
struct PageTextRouteTests {
    static let pdf = TestPDF.text(pages: [
        [
            .init("Contact support@example.com today", x: 72, y: 700, size: 12),
            .init("Invoice 2026-11 due 11/30/2026", x: 72, y: 680, size: 12),
        ],
        [.init("Second page: contact us again", x: 72, y: 700, size: 10)],
    ])

    @Test func pageTextHasLinesWithWordPositions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(Self.pdf)
            for base in ["/api/documents/\(id)", "/api/documents/\(id)/layers/review"] {
                let page = try await client.request(.get, "\(base)/pages/0/text")
                #expect(page.status == .ok, "\(page.reason ?? "")")
                let lines = try #require(page.json?["textLines"]?.arrayValue)
                #expect(
                    lines.map { $0["contents"]?.stringValue } == [
                        "Contact support@example.com today", "Invoice 2026-11 due 11/30/2026",
                    ])
                let first = try #require(lines.first?["words"]?.arrayValue?.first)
                #expect(first["contents"] == "Contact")
                #expect(abs((first["left"]?.doubleValue ?? 0) - 72) < 0.01)
                #expect(abs((first["top"]?.doubleValue ?? 0) - (792 - 700 - 0.718 * 12)) < 0.01)
                #expect((lines[0]["width"]?.doubleValue ?? 0) > 150)
                let all = try await client.request(.get, "\(base)/pages/text")
                #expect(all.status == .ok)
                let pages = try #require(all.json?.arrayValue)
                #expect(pages.map { $0["pageIndex"] } == [0, 1])
                #expect(pages[1]["textLines"]?.arrayValue?.first?["contents"] == "Second page: contact us again")
            }
            let outside = try await client.request(.get, "/api/documents/\(id)/pages/2/text")
            #expect(outside.status == .notFound)
            #expect(outside.reason?.contains("page_index") == true)
            #expect(try await client.request(.get, "/api/documents/nope/pages/text").status == .notFound)
        }
    }

    @Test func searchFindsTextRegularExpressionsAndPresets() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(Self.pdf)
            let text = try await client.request(.get, "/api/documents/\(id)/search?q=CONTACT")
            #expect(text.status == .ok, "\(text.reason ?? "")")
            let results = try #require(text.data?.arrayValue)
            #expect(results.map { $0["pageIndex"] } == [0, 1])
            #expect(results[0]["previewText"] == "Contact support@example.com today")
            #expect(results[0]["rangeInPreview"] == [0, 7])
            #expect(results[0]["isAnnotation"] == false)
            let rect = try #require(results[0]["rectsOnPage"]?.arrayValue?.first?.arrayValue)
            #expect(abs((rect[0].doubleValue ?? 0) - 72) < 0.01)
            #expect(abs((rect[1].doubleValue ?? 0) - (792 - 700 - 0.718 * 12)) < 0.01)

            let sensitive = try await client.request(.get, "/api/documents/\(id)/search?q=CONTACT&case_sensitive=true")
            #expect(sensitive.data?.arrayValue?.isEmpty == true)
            let ranged = try await client.request(.get, "/api/documents/\(id)/search?q=contact&start=1")
            #expect(ranged.data?.arrayValue?.map { $0["pageIndex"] } == [1])

            let regex = try await client.request(.get, "/api/documents/\(id)/search?q=20%5Cd%5Cd-%5Cd%5Cd&type=regex")
            #expect(regex.data?.arrayValue?.first?["previewText"] == "Invoice 2026-11 due 11/30/2026")
            #expect(regex.data?.arrayValue?.first?["rangeInPreview"] == [8, 7])

            let email = try await client.request(.get, "/api/documents/\(id)/search?q=email-address&type=preset")
            #expect(email.data?.arrayValue?.count == 1)
            #expect(email.data?.arrayValue?.first?["rangeInPreview"] == [8, 19])
            let date = try await client.request(.get, "/api/documents/\(id)/search?q=date&type=preset")
            #expect(date.data?.arrayValue?.first?["rangeInPreview"] == [20, 10])

            for bad in [
                "q=ab", "q=(unclosed&type=regex", "q=nothing&type=preset", "q=abc&type=fuzzy", "", "q=abc&start=-1",
            ] {
                let refused = try await client.request(.get, "/api/documents/\(id)/search?\(bad)")
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(refused.reason?.isEmpty == false)
            }
        }
    }
}
