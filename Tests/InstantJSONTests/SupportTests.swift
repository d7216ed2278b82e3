import Foundation
import InstantJSON
import Testing

@Suite("ULIDs, dates and attachments")
struct SupportTests {
    @Test func ulidsAreMonotonicWithinAMillisecond() {
        let generator = ULIDGenerator(now: { Date(timeIntervalSince1970: 1_700_000_000.123) })
        let ids = (0..<1_000).map { _ in generator.next() }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == 1_000)
        #expect(ids.allSatisfy { $0.string.count == 26 && ULID($0.string) == $0 })
        #expect(abs(ids[0].date.timeIntervalSince1970 - 1_700_000_000.123) < 0.001)
        #expect(ids[0].string.hasPrefix("01HF7YAT"))  // 1_700_000_000_123 ms in Crockford base32
    }

    @Test func ulidParsing() {
        #expect(ULID("01chg7qmtdt1jfyq8bskgt6f3p")?.string == "01CHG7QMTDT1JFYQ8BSKGT6F3P")
        #expect(ULID("01CHG7QMTDT1JFYQ8BSKGT6F3") == nil)  // 25 characters
        #expect(ULID("01CHG7QMTDT1JFYQ8BSKGT6F3U") == nil)  // U is not Crockford base32
        #expect(ULID("81CHG7QMTDT1JFYQ8BSKGT6F3P") == nil)  // over 48 bits of time
    }

    @Test(arguments: [
        ("2018-07-03T13:53:03Z", 1_530_625_983.0),
        ("2018-07-03T13:53:03.250Z", 1_530_625_983.25),
        ("2018-07-03T15:53:03+02:00", 1_530_625_983.0),
        ("2018-07-03T08:53:03.5-0500", 1_530_625_983.5),
        ("2024-02-29T00:00:00Z", 1_709_164_800.0),
    ])
    func isoDates(text: String, seconds: Double) {
        #expect(InstantDate.parse(text)?.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: ["2018-07-03", "2018-07-03T13:53:03", "2023-02-29T00:00:00Z", "2018-13-03T13:53:03Z", "yesterday"])
    func invalidDates(text: String) {
        #expect(InstantDate.parse(text) == nil)
    }

    @Test func datesFormatInUTC() {
        #expect(InstantDate.string(from: Date(timeIntervalSince1970: 1_530_625_983)) == "2018-07-03T13:53:03Z")
        #expect(InstantDate.string(from: Date(timeIntervalSince1970: 1_530_625_983.25)) == "2018-07-03T13:53:03.250Z")
        #expect(InstantDate.string(from: Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        // Every part padded to its width, milliseconds included; years before 1000 too.
        #expect(InstantDate.string(from: Date(timeIntervalSince1970: 946_688_461.005)) == "2000-01-01T01:01:01.005Z")
        #expect(InstantDate.string(from: Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
        // Formatting and parsing agree.
        for seconds in [0, 1_709_164_800.999, 4_102_444_799.5] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(InstantDate.parse(InstantDate.string(from: date)) == date)
        }
    }

    @Test func attachmentsAreKeyedBySHA256() throws {
        let attachment = Attachment(data: Data("test".utf8), contentType: "image/png")
        #expect(attachment.key == "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        #expect(try Attachment(json: attachment.json) == attachment)
        #expect(Attachment.validateContentType("image/png; charset=binary") == nil)
        #expect(Attachment.validateContentType("image") != nil)
        let document = InstantDocumentJSON(attachments: [attachment.key: attachment])
        let decoded = try InstantDocumentJSON(parsing: document.serialized())
        #expect(decoded.attachments[attachment.key]?.data == Data("test".utf8))
    }
}
