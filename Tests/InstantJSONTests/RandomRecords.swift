import InstantJSON

/// Random valid annotations of every type, for the property test.
enum RandomRecords {
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func annotation(of type: AnnotationType, seed: UInt64) -> JSONValue {
        var random = SplitMix(state: seed)
        func number() -> JSONValue {
            Bool.random(using: &random)
                ? .integer(Int64.random(in: -1000...5000, using: &random))
                : .double(Double(Int.random(in: -100_000...500_000, using: &random)) / 64)
        }
        func positive() -> JSONValue { .double(Double(Int.random(in: 0...10_000, using: &random)) / 8) }
        func point() -> JSONValue { [number(), number()] }
        func rect() -> JSONValue { [number(), number(), positive(), positive()] }
        func color() -> JSONValue {
            .string(
                RGBColor(
                    red: UInt8.random(in: 0...255, using: &random), green: UInt8.random(in: 0...255, using: &random),
                    blue: UInt8.random(in: 0...255, using: &random)
                ).hex)
        }
        func text() -> String {
            let alphabet = Array("abc XYZ é😀\"\\/\n\t<>&")
            return String(
                (0..<Int.random(in: 0...20, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
        }
        var members: JSONObject = [
            "v": 2, "type": .string(type.rawValue), "pageIndex": .integer(Int64.random(in: 0...500, using: &random)),
            "bbox": rect(),
        ]
        if Bool.random(using: &random) {
            members["opacity"] = .double(Double(Int.random(in: 0...100, using: &random)) / 100)
        }
        if Bool.random(using: &random) { members["name"] = .string(text()) }
        if Bool.random(using: &random) { members["createdAt"] = "2024-02-29T12:00:00.5Z" }
        if Bool.random(using: &random) {
            members["customData"] = ["k": .string(text()), "n": number(), "list": [nil, true]]
        }
        if Bool.random(using: &random) { members["x-extension-\(Int.random(in: 0...9, using: &random))"] = number() }
        switch type {
        case .ink:
            let strokes = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                (0..<Int.random(in: 1...30, using: &random)).map { _ in point() }
            }
            members["lines"] = [
                "points": .array(strokes.map(JSONValue.array)),
                "intensities": .array(strokes.map { .array($0.map { _ in 0.5 }) }),
            ]
            members["lineWidth"] = positive()
            members["strokeColor"] = color()
        case .highlight, .squiggly, .strikeOut, .underline:
            members["rects"] = .array((0..<Int.random(in: 1...5, using: &random)).map { _ in rect() })
            members["color"] = color()
        case .note:
            members["text"] = ["format": "plain", "value": .string(text())]
            members["icon"] = "comment"
        case .text:
            members["text"] = ["format": "xhtml", "value": .string(text())]
            members["fontSize"] = positive()
        case .line:
            members["startPoint"] = point()
            members["endPoint"] = point()
            members["lineCaps"] = ["start": "openArrow", "end": "circle"]
        case .polygon, .polyline:
            members["points"] = .array((0..<Int.random(in: 2...12, using: &random)).map { _ in point() })
        case .ellipse, .rectangle:
            members["strokeDashArray"] = [positive(), positive()]
            members["fillColor"] = color()
        case .stamp:
            members["stampType"] = .string(StampType.standard.randomElement(using: &random)!.rawValue)
        case .link:
            members["action"] = ["type": "uri", "uri": .string("https://example.com/\(text())")]
        default:
            break
        }
        return .object(members)
    }
}
