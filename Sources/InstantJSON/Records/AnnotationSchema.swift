/// The members of each annotation type and what their values must look like, after the published
/// schemas of the format (`BaseAnnotation`, `InkAnnotation`, …, in version 1 and 2).
enum AnnotationSchema {
    static func base(version: Int) -> [FieldRule] {
        [
            .required("v", .integerIn([1, 2])),
            .required("type", .string),
            .required("pageIndex", .nonNegativeInteger),
            .required("bbox", .rect),
            .optional("action", .action),
            .optional("opacity", .unitInterval),
            .optional("pdfObjectId", .integer(minimum: 0)),
            .optional("id", .string),
            .optional("flags", .array(.string)),
            .optional("createdAt", .date),
            .optional("updatedAt", .date),
            .optional("name", .string),
            .optional("creatorName", .string),
            .optional("customData", .freeObject),
            .optional("group", .string),
            .optional("note", .string),
            .optional("isCommentThreadRoot", .bool),
            .optional("blendMode", .string),
        ]
    }

    static let rotation = ValueRule.integerIn([0, 90, 180, 270])
    static let measurementScale = ValueRule.object([
        .optional("unitFrom", .string), .optional("unitTo", .string),
        .optional("from", .number(minimum: nil, maximum: nil)), .optional("to", .number(minimum: nil, maximum: nil)),
    ])
    static let shape: [FieldRule] = [
        .optional("strokeDashArray", .array(.number(minimum: 0, maximum: nil))),
        .optional("strokeWidth", .number(minimum: 0, maximum: nil)),
        .optional("strokeColor", .color),
        .optional("fillColor", .color),
        .optional("measurementScale", measurementScale),
        .optional("measurementPrecision", .string),
        .optional("cloudyBorderIntensity", .number(minimum: 0, maximum: nil)),
        .optional("cloudyBorderInset", .rect),
    ]
    static let lineCaps = ValueRule.object([.optional("start", .string), .optional("end", .string)])
    static let inkLines = ValueRule.object([
        .required("points", .array(.array(.point))),
        .optional("intensities", .array(.array(.unitInterval))),
    ])
    static let callout = ValueRule.object([
        .required("start", .point), .required("end", .point),
        .required("innerRectInset", .numbers(count: 4, meaning: "insets [left, top, right, bottom]")),
        .optional("knee", .point), .optional("cap", .string),
    ])
    static let fontSize = ValueRule.either(
        .number(minimum: 0, maximum: nil), .stringIn(["auto"]), meaning: "a font size: a number or \"auto\"")

    static func rules(for type: AnnotationType, version: Int) -> MemberRules {
        known[version]?[type] ?? MemberRules(base(version: version) + specific(for: type, version: version))
    }

    /// The rules of the known types in versions 1 and 2, built once (every pushed annotation is
    /// checked against them); another version or type has its rules built when checked.
    private static let known: [Int: [AnnotationType: MemberRules]] = Dictionary(
        uniqueKeysWithValues: [1, 2].map { version in
            let rules = AnnotationType.allKnown.map {
                ($0, MemberRules(base(version: version) + specific(for: $0, version: version)))
            }
            return (version, Dictionary(uniqueKeysWithValues: rules))
        })

    static func specific(for type: AnnotationType, version: Int) -> [FieldRule] {
        switch type {
        case .ink:
            return [
                .required("lines", inkLines), .required("lineWidth", .number(minimum: 0, maximum: nil)),
                .optional("isDrawnNaturally", .bool), .optional("isSignature", .bool),
                .optional("strokeColor", .color), .optional("backgroundColor", .color),
            ]
        case .highlight, .squiggly, .strikeOut, .underline:
            return [.required("rects", .array(.rect)), .required("color", .color)]
        case .redaction:
            return [
                .optional("rects", .array(.rect)), .optional("outlineColor", .color), .optional("fillColor", .color),
                .optional("overlayText", .string), .optional("repeatOverlayText", .bool), .optional("color", .color),
                .optional("rotation", rotation),
            ]
        case .text:
            return [
                .required("text", .text(version: version)), .required("fontSize", .number(minimum: 0, maximum: nil)),
                .optional("fontStyle", .array(.string)), .optional("fontColor", .color), .optional("font", .string),
                .optional("backgroundColor", .color), .optional("horizontalAlign", .string),
                .optional("verticalAlign", .string), .optional("rotation", rotation), .optional("isFitting", .bool),
                .optional("callout", callout), .optional("borderStyle", .string),
                .optional("borderWidth", .number(minimum: 0, maximum: nil)),
                .optional("cloudyBorderIntensity", .number(minimum: 0, maximum: nil)),
                .optional("cloudyBorderInset", .rect),
            ]
        case .link:
            return [
                .optional("borderColor", .color), .optional("borderStyle", .string),
                .optional("borderWidth", .number(minimum: 0, maximum: nil)),
            ]
        case .note:
            return [.required("text", .text(version: version)), .required("icon", .string), .optional("color", .color)]
        case .commentMarker:
            return [.optional("text", .text(version: version)), .optional("icon", .string), .optional("color", .color)]
        case .ellipse, .rectangle:
            return shape
        case .line:
            return shape + [
                .required("startPoint", .point), .required("endPoint", .point), .optional("lineCaps", lineCaps),
            ]
        case .polyline:
            return shape + [.required("points", .array(.point)), .optional("lineCaps", lineCaps)]
        case .polygon:
            return shape + [.required("points", .array(.point))]
        case .image:
            return [
                .optional("description", .string), .optional("fileName", .string), .optional("contentType", .string),
                .optional("imageAttachmentId", .string), .optional("rotation", rotation),
                .optional("isSignature", .bool),
            ]
        case .stamp:
            return [
                .required("stampType", .string), .optional("title", .string), .optional("subtitle", .string),
                .optional("color", .color), .optional("rotation", rotation),
            ]
        case .widget:
            return [
                .optional("formFieldName", .string), .optional("borderColor", .color),
                .optional("borderStyle", .string), .optional("borderWidth", .number(minimum: 0, maximum: nil)),
                .optional("font", .string), .optional("fontSize", fontSize), .optional("fontColor", .color),
                .optional("fontStyle", .array(.string)), .optional("horizontalAlign", .string),
                .optional("verticalAlign", .string), .optional("rotation", rotation),
                .optional("backgroundColor", .color),
            ]
        default:
            return []
        }
    }
}
