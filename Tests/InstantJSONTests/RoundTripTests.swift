import Foundation
import PropertyBased
import Testing

@testable import InstantJSON

@Suite("Lossless round trip of records and documents")
struct RoundTripTests {
    /// Decodes `text` as a record of `Record`, encodes it again, and checks the JSON value is unchanged.
    func roundTrip<Record: InstantRecord>(_ text: String, as type: Record.Type) throws {
        let original = try JSONValue(parsing: text)
        let record = try Record(json: original)
        #expect(record.jsonValue == original)
        let reparsed = try JSONValue(parsing: record.serialized())
        #expect(reparsed == original)
        // Codable goes through the same representation.
        let viaCodable = try JSONDecoder().decode(Record.self, from: JSONEncoder().encode(record))
        #expect(viaCodable == record)
    }

    @Test func documentationInkAnnotation() throws {
        try roundTrip(Fixtures.documentationInk, as: Annotation.self)
        let ink = try Annotation(parsing: Array(Fixtures.documentationInk.utf8))
        #expect(ink.type == .ink)
        #expect(ink.version == 1)
        #expect(ink.bbox == Rect(left: 89, top: 98, width: 143, height: 207))
        #expect(ink.lines?.points.count == 2)
        #expect(ink.lines?.points[1][2] == Point(x: 230, y: 303))
        #expect(ink.strokeColor == RGBColor(red: 0xAA, green: 0x47, blue: 0xBE))
        #expect(ink.lineWidth == 5)
        #expect(ink.createdAtDate == Date(timeIntervalSince1970: 1_530_625_983))
    }

    @Test func documentationDocument() throws {
        let original = try JSONValue(parsing: Fixtures.documentationDocument)
        let document = try InstantDocumentJSON(parsing: Array(Fixtures.documentationDocument.utf8))
        #expect(document.jsonValue == original)
        #expect(document.annotations.first?.id == "01CHG7QMTDT1JFYQ8BSKGT6F3P")
        #expect(document.bookmarks.first?.action?.pageIndex == 1)
        #expect(document.skippedPdfObjectIds == [557])
        #expect(document.pdfId == PDFId(permanent: "qTwUmg5VSm6ysfzcPlFvnQ==", changing: "wljL9fB/TPOAuGjHAsAsHg=="))
    }

    @Test(arguments: Fixtures.annotations.keys.sorted())
    func annotationOfEveryType(_ name: String) throws {
        try roundTrip(Fixtures.annotations[name]!, as: Annotation.self)
    }

    @Test func everyKnownTypeHasAFixture() throws {
        let types = Set(try Fixtures.annotations.values.map { try Annotation(json: JSONValue(parsing: $0)).type })
        #expect(types == Set(AnnotationType.allKnown))
    }

    @Test func otherRecords() throws {
        try roundTrip(Fixtures.bookmark, as: Bookmark.self)
        for field in Fixtures.formFields { try roundTrip(field, as: FormField.self) }
        for value in Fixtures.formFieldValues { try roundTrip(value, as: FormFieldValue.self) }
        for comment in Fixtures.comments { try roundTrip(comment, as: Comment.self) }
    }

    @Test func unknownKeysAndEnumValuesSurvive() throws {
        let text = """
            {"v": 2, "type": "pspdfkit/shape/hexagon", "pageIndex": 0, "bbox": [0, 0, 1, 1],
             "blendMode": "luminosity", "flags": ["sparkly"], "corners": 6, "big": 9007199254740993,
             "tiny": 1e-300, "unicode": "\\u00e9\\ud83d\\ude00\\n"}
            """
        let annotation = try Annotation(json: JSONValue(parsing: text))
        #expect(annotation.type.rawValue == "pspdfkit/shape/hexagon")
        #expect(annotation.blendMode == BlendMode(rawValue: "luminosity"))
        #expect(annotation.flags == [AnnotationFlag(rawValue: "sparkly")])
        #expect(annotation["big"] == .integer(9_007_199_254_740_993))
        #expect(annotation["unicode"] == .string("é😀\n"))
        #expect(try JSONValue(parsing: annotation.serialized()) == JSONValue(parsing: text))
    }

    @Test func integersStayIntegers() throws {
        let value = try JSONValue(parsing: #"[5, 5.0, -0.5, 1.5e3, 123456789012345678]"#)
        #expect(value.serializedString() == "[5,5.0,-0.5,1500.0,123456789012345678]")
    }

    /// Objects inside objects and arrays keep their own members; of a key given twice in one
    /// object, the last value counts, as in most JSON readers.
    @Test func nestedObjectsKeepTheirMembers() throws {
        let value = try JSONValue(
            parsing:
                #"{"a": {"b": {"c": 0}, "d": [{"e": 2}, {}, {"e": 3, "e": 4}], "b": {"c": 1}}, "f": 5, "a2": {}, "f": 6}"#
        )
        let expected: JSONValue = [
            "a": ["b": ["c": 1], "d": [["e": 2], [:], ["e": 4]]],
            "f": 6,
            "a2": [:],
        ]
        #expect(value == expected)
        #expect(value.serializedString() == #"{"a":{"b":{"c":1},"d":[{"e":2},{},{"e":4}]},"a2":{},"f":6}"#)
    }

    /// Strings come back as they were, whether they need escapes or not; those that need none are
    /// written as they are.
    @Test func stringsRoundTripWhateverTheyHold() throws {
        let strings = [
            "", "plain", "with \"quotes\"", "back\\slash", "new\nline\ttab\rreturn", "\u{1}\u{1f}\u{7f}",
            "ünïcödé 漢字 🎉", String(repeating: "long-id-", count: 40),
        ]
        for string in strings {
            var output: [UInt8] = []
            JSONValue.writeString(string, into: &output)
            #expect(try JSONValue(parsing: String(decoding: output, as: UTF8.self)) == .string(string))
            let keyed: JSONValue = [string: .string(string)]
            #expect(try JSONValue(parsing: keyed.serializedString()) == keyed)
            let needsEscape = string.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            #expect(JSONValue.needsEscaping(string) == needsEscape)
            if !needsEscape {
                #expect(output == [UInt8(ascii: "\"")] + Array(string.utf8) + [UInt8(ascii: "\"")])
            }
        }
    }

    /// The check for bytes to escape, which reads eight bytes at a time, finds each such byte
    /// wherever it lies in a word or the tail after the last word, and takes no other byte for one:
    /// every byte value at every position.
    @Test func aByteToEscapeIsFoundAtEveryPosition() {
        let toEscape = Set<UInt8>((0..<0x20).map(UInt8.init) + [UInt8(ascii: "\""), UInt8(ascii: "\\")])
        let others: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF]
        for length in 1...19 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let found = bytes.withUnsafeBufferPointer(JSONValue.hasByteToEscape)
                    #expect(found == toEscape.contains(byte), "byte \(byte) at \(position) of \(length)")
                }
            }
            // A word of bytes that never need escaping, each just past one that does.
            let clean = (0..<length).map { others[$0 % others.count] }
            #expect(!clean.withUnsafeBufferPointer(JSONValue.hasByteToEscape))
        }
    }

    /// Equal values give equal bytes: members in key order at every depth.
    @Test func objectsAreWrittenInKeyOrder() throws {
        let value: JSONValue = ["b": 1, "a": ["z": true, "y": .null, "é": "x"], "A": [["d": 1, "c": 2]]]
        #expect(value.serializedString() == #"{"A":[{"c":2,"d":1}],"a":{"y":null,"z":true,"é":"x"},"b":1}"#)
        #expect(try JSONValue(parsing: value.serializedString()) == value)
    }

    /// The parser finds where a string's plain ASCII stops eight bytes at a time: every byte value
    /// at every position of strings of 1 to 19 bytes is read as it should be.
    @Test func everyByteOfAStringIsReadAtEveryPosition() {
        for length in 1...19 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let parsed = try? JSONValue(parsing: [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")])
                    // A control character, a quote before the end, a backslash before "a" (no such
                    // escape) and a byte beyond ASCII on its own (not UTF-8) are refused.
                    let isRefused =
                        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte >= 0x80
                    let expected = isRefused ? JSONValue?.none : .string(String(decoding: bytes, as: UTF8.self))
                    #expect(parsed == expected, "byte \(byte) at \(position) of \(length)")
                }
                // A character of two bytes, and an escaped quote.
                var text = String(repeating: "a", count: length)
                text.insert("é", at: text.index(text.startIndex, offsetBy: position))
                #expect((try? JSONValue(parsing: "\"\(text)\"")) == .string(text))
                let escaped = String(text.prefix(position)) + #"\""# + text.dropFirst(position)
                let unescaped = String(text.prefix(position)) + "\"" + text.dropFirst(position)
                #expect((try? JSONValue(parsing: "\"\(escaped)\"")) == .string(unescaped))
            }
        }
    }

    /// Integers are written in full, whatever their size and sign, and read back the same.
    @Test func integersAreWrittenInFull() throws {
        for value in [0, 7, -1, 10, -10, 1_000_000, 9_007_199_254_740_993, Int64.max, Int64.min] as [Int64] {
            #expect(JSONValue.integer(value).serializedString() == String(value))
            #expect(try JSONValue(parsing: JSONValue.integer(value).serializedString()) == .integer(value))
        }
    }

    /// An object written with members replaced has the bytes of the merged object: replaced keys
    /// take their new value in key order, new keys join in order, and a `nil` leaves a key out.
    @Test func objectsWrittenWithReplacementsMatchTheMergedObject() async throws {
        let members: JSONObject = ["b": 1, "updatedAt": "old", "creatorName": "Client", "a": ["z": true]]
        let written = JSONValue.serializedObject(
            members, replacing: [("updatedAt", "now"), ("createdAt", "then"), ("creatorName", nil)])
        #expect(
            String(decoding: written, as: UTF8.self)
                == #"{"a":{"z":true},"b":1,"createdAt":"then","updatedAt":"now"}"#)
        #expect(JSONValue.serializedObject([:], replacing: []) == JSONValue.object([:]).serialized())
        await propertyCheck(
            count: 200, input: Gen.element(of: AnnotationType.allKnown), Gen.int(in: 0...Int(Int32.max))
        ) { type, seed in
            guard case .object(let record) = RandomRecords.annotation(of: type!, seed: UInt64(seed)) else { return }
            // Replaces a key the record has (every one has a type), removes one, adds one.
            let replacements: [(key: String, value: JSONValue?)] = [
                ("type", "pspdfkit/replaced"), ("bbox", nil), ("zz-added", ["n": 1]),
            ]
            var merged = record
            for (key, value) in replacements { merged[key] = value }
            #expect(
                JSONValue.serializedObject(record, replacing: replacements) == JSONValue.object(merged).serialized())
        }
    }

    @Test func emptyArraysAreOmittedOnOutput() throws {
        let document = try InstantDocumentJSON(
            parsing: Array(#"{"format": "https://pspdfkit.com/instant-json/v1", "annotations": []}"#.utf8))
        #expect(document.isEmpty)
        #expect(document.jsonValue == ["format": "https://pspdfkit.com/instant-json/v1"])
    }

    @Test func typedSettersWriteTheWireForm() throws {
        var annotation = Annotation(type: .line, pageIndex: 3, bbox: Rect(left: 1, top: 2, width: 3, height: 4.5))
        annotation.startPoint = Point(x: 1, y: 2)
        annotation.endPoint = Point(x: 4, y: 6.5)
        annotation.strokeColor = RGBColor(normalizedRed: 1, green: 0, blue: 0.5)
        annotation.lineCaps = (start: .circle, end: nil)
        annotation.text = AnnotationText(value: "hi")
        #expect(annotation["bbox"] == [1, 2, 3, 4.5])
        #expect(annotation["strokeColor"] == "#FF0080")
        #expect(annotation["lineCaps"] == ["start": "circle"])
        #expect(annotation["text"] == ["format": "plain", "value": "hi"])
        #expect(Annotation.validationErrors(of: annotation.jsonValue, at: "").isEmpty)
    }

    @Test
    func randomValidRecordsRoundTrip() async {
        await propertyCheck(
            count: 300, input: Gen.element(of: AnnotationType.allKnown), Gen.int(in: 0...Int(Int32.max))
        ) { type, seed in
            let value = RandomRecords.annotation(of: type!, seed: UInt64(seed))
            let errors = Annotation.validationErrors(of: value, at: "")
            #expect(errors.isEmpty, "generated record is invalid: \(errors)")
            guard let record = try? Annotation(json: value) else { return }
            #expect(record.jsonValue == value)
            #expect((try? JSONValue(parsing: record.serialized())) == value)
        }
    }
}
