import Foundation
import InstantJSON
import Testing

@Suite("Bad input gives precise errors")
struct BadInputTests {
    func documentError(_ text: String, mode: InstantDocumentJSON.ValidationMode = .strict) -> InstantJSONError? {
        do {
            _ = try InstantDocumentJSON.decode(Array(text.utf8), mode: mode)
            return nil
        } catch {
            return error
        }
    }

    static let format = #""format": "https://pspdfkit.com/instant-json/v1""#

    @Test(arguments: [
        (#"{"format": "https://pspdfkit.com/instant-json/v1", "annotations": [{"v": 2"#, "unexpected end of input"),
        (#"{"format": "x""#, "unexpected end of input"),
        (#"[1, 2,]"#, "expected a value"),
        (#"{"a": 01}"#, "leading zero"),
        (#"{"a": "\x"}"#, "invalid escape"),
        (#"{"a": "\ud800"}"#, "unpaired UTF-16 surrogate"),
        (#"{"a": 1} x"#, "unexpected data after the JSON value"),
        (#"{"a": 1e999}"#, "out of range"),
    ])
    func malformedJSON(text: String, rule: String) {
        let error = documentError(text)
        #expect(error?.code == .malformedJSON)
        #expect(error?.rule.contains(rule) == true, "\(String(describing: error))")
        #expect(error?.rule.contains("line 1, column") == true)
    }

    /// JSON text is UTF-8: invalid bytes in a string are refused, with or without escapes before
    /// them, never replaced.
    @Test func invalidUTF8IsRefused() throws {
        for prefix in ["", "\\n"] {
            let bytes = Array(#"{"a": "ok \#(prefix)"#.utf8) + [0xC3, 0x28, 0xFF] + Array(#""}"#.utf8)
            #expect(throws: InstantJSONError.self) { try JSONValue(parsing: bytes) }
            do {
                _ = try JSONValue(parsing: bytes)
            } catch {
                #expect(error.rule.contains("invalid UTF-8 in a string"))
                #expect(error.rule.contains("line 1, column 8"), "the string starts there")
            }
        }
        #expect(try JSONValue(parsing: Array(#"{"a": "é😀"}"#.utf8))["a"] == "é😀")
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = documentError(deep)
        #expect(error?.code == .malformedJSON)
        #expect(error?.rule.contains("nesting deeper than 512") == true)
        let customData =
            #"{"#
            + Self.format
            + #", "annotations": [{"v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [0, 0, 1, 1], "text": {"format": "plain", "value": ""}, "icon": "note", "customData": "#
            + String(repeating: #"{"a":"#, count: 600) + "1" + String(repeating: "}", count: 600) + "}]}"
        #expect(documentError(customData)?.code == .malformedJSON)
    }

    @Test func unknownFormat() {
        let error = documentError(#"{"format": "https://example.com/v2"}"#)
        #expect(error?.code == .unsupportedFormat)
        #expect(
            error?.description
                == #"format: expected "https://pspdfkit.com/instant-json/v1", found "https://example.com/v2""#)
        #expect(documentError(#"{"annotations": []}"#)?.description == "format: required key is missing")
    }

    @Test(arguments: [
        (
            #"{"v": 2, "type": "pspdfkit/ink", "pageIndex": 0, "bbox": [1, 2, 3]}"#,
            "annotations[0].bbox: expected 4 numbers (a rectangle [left, top, width, height])"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/ink", "pageIndex": -1, "bbox": [1, 2, 3, 4], "lines": {"points": []}, "lineWidth": 1}"#,
            "annotations[0].pageIndex: expected an integer ≥ 0, found -1"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/ink", "pageIndex": "0", "bbox": [1, 2, 3, 4], "lines": {"points": []}, "lineWidth": 1}"#,
            "annotations[0].pageIndex: expected an integer, found a string"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/ink", "pageIndex": 1e30, "bbox": [1, 2, 3, 4], "lines": {"points": []}, "lineWidth": 1}"#,
            "annotations[0].pageIndex: expected an integer"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/ink", "pageIndex": 0, "bbox": [1, 2, 3, 4], "lineWidth": 1}"#,
            "annotations[0].lines: required key is missing"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/ink", "pageIndex": 0, "bbox": [1, 2, 3, 4], "lines": {"points": [[[1]]]}, "lineWidth": 1}"#,
            "annotations[0].lines.points[0][0]: expected 2 numbers (a point [x, y])"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [1, 2, 3, 4], "text": "plain", "icon": "note"}"#,
            #"annotations[0].text: expected an object {"format": "plain" or "xhtml", "value": string}, found a string"#
        ),
        (
            #"{"v": 2, "type": "pspdfkit/markup/highlight", "pageIndex": 0, "bbox": [1, 2, 3, 4], "rects": [], "color": "red"}"#,
            ##"annotations[0].color: expected a color like "#RRGGBB", found "red""##
        ),
        (
            #"{"v": 2, "type": "pspdfkit/link", "pageIndex": 0, "bbox": [1, 2, 3, 4], "opacity": 1.5}"#,
            "annotations[0].opacity: expected a number between 0 and 1"
        ),
        (
            #"{"v": 3, "type": "pspdfkit/link", "pageIndex": 0, "bbox": [1, 2, 3, 4]}"#,
            "annotations[0].v: expected one of 1, 2"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/link", "pageIndex": 0, "bbox": [1, 2, 3, 4], "createdAt": "yesterday"}"#,
            #"annotations[0].createdAt: expected an ISO 8601 date-time such as "2018-07-03T13:53:03Z", found "yesterday""#
        ),
        (
            #"{"v": 2, "type": "pspdfkit/link", "pageIndex": 0, "bbox": [1, 2, 3, 4], "action": {"type": "goTo"}}"#,
            "annotations[0].action.pageIndex: required key is missing"
        ),
        (
            #"{"v": 2, "type": "pspdfkit/stamp", "pageIndex": 0, "bbox": [1, 2, 3, 4], "stampType": "Draft", "rotation": 45}"#,
            "annotations[0].rotation: expected one of 0, 90, 180, 270"
        ),
    ])
    func recordErrorsNameThePathAndTheRule(annotation: String, expected: String) {
        let text = "{\(Self.format), \"annotations\": [\(annotation)]}"
        #expect(documentError(text)?.description == expected)
    }

    /// All of a record's errors come in the order of its schema (the members every annotation
    /// has, then its type's), whichever order its members are stored in.
    @Test func aRecordsErrorsComeInTheOrderOfItsSchema() throws {
        let members: [(String, JSONValue)] = [
            ("v", 2), ("type", "pspdfkit/note"), ("pageIndex", -1), ("bbox", [1, 2]), ("opacity", 2),
            ("text", ["format": "plain"]), ("color", "red"), ("customData", ["any": "thing"]), ("unknown", true),
        ]
        let expected = [
            "note.pageIndex: expected an integer ≥ 0, found -1",
            "note.bbox: expected 4 numbers (a rectangle [left, top, width, height])",
            "note.opacity: expected a number between 0 and 1",
            "note.text.value: required key is missing",
            "note.icon: required key is missing",
            ##"note.color: expected a color like "#RRGGBB", found "red""##,
        ]
        // The same members in dictionaries of other sizes and insertion orders iterate differently.
        for (capacity, order) in [(0, members), (64, members.reversed()), (1_000, members.shuffled())] {
            var object = [String: JSONValue](minimumCapacity: capacity)
            for (key, value) in order { object[key] = value }
            #expect(Annotation.validationErrors(of: .object(object), at: "note").map(\.description) == expected)
        }
    }

    @Test func lenientModeSkipsBadRecordsAndReportsThem() throws {
        let text = """
            {\(Self.format), "annotations": [
              {"v": 2, "type": "pspdfkit/link", "pageIndex": 0, "bbox": [1, 2, 3, 4]},
              {"v": 2, "type": "pspdfkit/link", "pageIndex": 0, "bbox": [1, 2]},
              {"v": 2, "type": "pspdfkit/link", "pageIndex": 1, "bbox": [1, 2, 3, 4]}],
             "comments": [{"v": 2, "type": "pspdfkit/comment"}]}
            """
        let result = try InstantDocumentJSON.decode(Array(text.utf8), mode: .lenient)
        #expect(result.document.annotations.map(\.pageIndex) == [0, 1])
        #expect(result.skipped.map(\.path) == ["annotations[1].bbox", "comments[0].pageIndex"])
        // Problems of the document itself still fail in lenient mode.
        #expect(
            documentError(#"{"format": "https://pspdfkit.com/instant-json/v1", "annotations": {}}"#, mode: .lenient)?
                .description == "annotations: expected an array, found an object")
    }

    @Test func badAttachments() {
        let badBase64 =
            #"{"# + Self.format + #", "attachments": {"abc": {"binary": "***", "contentType": "image/png"}}}"#
        #expect(documentError(badBase64)?.description == "attachments.abc.binary: expected base64 data")
        let badType = #"{"# + Self.format + #", "attachments": {"abc": {"binary": "AAEC", "contentType": "png"}}}"#
        #expect(documentError(badType)?.path == "attachments.abc.contentType")
    }

    @Test func randomBytesNeverCrash() {
        var generator = RandomRecords.SplitMix(state: 42)
        let valid = Array(Fixtures.documentationDocument.utf8)
        for _ in 0..<2_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...5, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) {
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
            }
            _ = try? InstantDocumentJSON.decode(bytes, mode: .lenient)
            _ = try? InstantDocumentJSON.decode(bytes, mode: .strict)
        }
    }
}
