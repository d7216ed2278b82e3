/// The `type` of an annotation record, such as `pspdfkit/ink`.
///
/// Types that this version does not know are kept; their records are checked for the members
/// every annotation shares.
public struct AnnotationType: WireEnum {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let ink: AnnotationType = "pspdfkit/ink"
    public static let link: AnnotationType = "pspdfkit/link"
    public static let highlight: AnnotationType = "pspdfkit/markup/highlight"
    public static let squiggly: AnnotationType = "pspdfkit/markup/squiggly"
    public static let strikeOut: AnnotationType = "pspdfkit/markup/strikeout"
    public static let underline: AnnotationType = "pspdfkit/markup/underline"
    public static let redaction: AnnotationType = "pspdfkit/markup/redaction"
    public static let note: AnnotationType = "pspdfkit/note"
    public static let text: AnnotationType = "pspdfkit/text"
    public static let ellipse: AnnotationType = "pspdfkit/shape/ellipse"
    public static let rectangle: AnnotationType = "pspdfkit/shape/rectangle"
    public static let line: AnnotationType = "pspdfkit/shape/line"
    public static let polygon: AnnotationType = "pspdfkit/shape/polygon"
    public static let polyline: AnnotationType = "pspdfkit/shape/polyline"
    public static let image: AnnotationType = "pspdfkit/image"
    public static let stamp: AnnotationType = "pspdfkit/stamp"
    public static let widget: AnnotationType = "pspdfkit/widget"
    public static let commentMarker: AnnotationType = "pspdfkit/comment-marker"
    public static let media: AnnotationType = "pspdfkit/media"
    public static let unknown: AnnotationType = "pspdfkit/unknown"

    /// Every type this version knows.
    public static let allKnown: [AnnotationType] = [
        .ink, .link, .highlight, .squiggly, .strikeOut, .underline, .redaction, .note, .text, .ellipse,
        .rectangle, .line, .polygon, .polyline, .image, .stamp, .widget, .commentMarker, .media, .unknown,
    ]

    /// Whether this is one of the text markup types (highlight, squiggly, strikeout, underline).
    public var isTextMarkup: Bool { [.highlight, .squiggly, .strikeOut, .underline].contains(self) }

    /// Whether this is one of the shape types (ellipse, rectangle, line, polygon, polyline).
    public var isShape: Bool { [.ellipse, .rectangle, .line, .polygon, .polyline].contains(self) }
}

/// An annotation flag (`noPrint`, `hidden`, `readOnly`, …).
public struct AnnotationFlag: WireEnum {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let noPrint: AnnotationFlag = "noPrint"
    public static let noZoom: AnnotationFlag = "noZoom"
    public static let noRotate: AnnotationFlag = "noRotate"
    public static let noView: AnnotationFlag = "noView"
    public static let hidden: AnnotationFlag = "hidden"
    public static let invisible: AnnotationFlag = "invisible"
    public static let readOnly: AnnotationFlag = "readOnly"
    public static let locked: AnnotationFlag = "locked"
    public static let toggleNoView: AnnotationFlag = "toggleNoView"
    public static let lockedContents: AnnotationFlag = "lockedContents"
}

/// How an annotation's colors mix with the page (`normal`, `multiply`, …).
public struct BlendMode: WireEnum {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let normal: BlendMode = "normal"
    public static let multiply: BlendMode = "multiply"
    public static let screen: BlendMode = "screen"
    public static let overlay: BlendMode = "overlay"
    public static let darken: BlendMode = "darken"
    public static let lighten: BlendMode = "lighten"
    public static let colorDodge: BlendMode = "colorDodge"
    public static let colorBurn: BlendMode = "colorBurn"
    public static let hardLight: BlendMode = "hardLight"
    public static let softLight: BlendMode = "softLight"
    public static let difference: BlendMode = "difference"
    public static let exclusion: BlendMode = "exclusion"
}

/// The end of a line or polyline (`openArrow`, `circle`, …).
public struct LineCap: WireEnum {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let square: LineCap = "square"
    public static let circle: LineCap = "circle"
    public static let diamond: LineCap = "diamond"
    public static let openArrow: LineCap = "openArrow"
    public static let closedArrow: LineCap = "closedArrow"
    public static let butt: LineCap = "butt"
    public static let reverseOpenArrow: LineCap = "reverseOpenArrow"
    public static let reverseClosedArrow: LineCap = "reverseClosedArrow"
    public static let slash: LineCap = "slash"
}

/// The standard stamps, and `Custom` for a stamp with its own title.
public struct StampType: WireEnum {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let accepted: StampType = "Accepted"
    public static let approved: StampType = "Approved"
    public static let asIs: StampType = "AsIs"
    public static let completed: StampType = "Completed"
    public static let confidential: StampType = "Confidential"
    public static let departmental: StampType = "Departmental"
    public static let draft: StampType = "Draft"
    public static let experimental: StampType = "Experimental"
    public static let expired: StampType = "Expired"
    public static let final: StampType = "Final"
    public static let forComment: StampType = "ForComment"
    public static let forPublicRelease: StampType = "ForPublicRelease"
    public static let informationOnly: StampType = "InformationOnly"
    public static let initialHere: StampType = "InitialHere"
    public static let notApproved: StampType = "NotApproved"
    public static let notForPublicRelease: StampType = "NotForPublicRelease"
    public static let preliminaryResults: StampType = "PreliminaryResults"
    public static let rejected: StampType = "Rejected"
    public static let revised: StampType = "Revised"
    public static let signHere: StampType = "SignHere"
    public static let sold: StampType = "Sold"
    public static let topSecret: StampType = "TopSecret"
    public static let void: StampType = "Void"
    public static let witness: StampType = "Witness"
    public static let custom: StampType = "Custom"

    /// Every standard stamp (all but `Custom`).
    public static let standard: [StampType] = [
        .accepted, .approved, .asIs, .completed, .confidential, .departmental, .draft, .experimental, .expired,
        .final, .forComment, .forPublicRelease, .informationOnly, .initialHere, .notApproved,
        .notForPublicRelease, .preliminaryResults, .rejected, .revised, .signHere, .sold, .topSecret, .void,
        .witness,
    ]
}

/// The text of a note, free text, comment marker or comment: plain text or XHTML.
///
/// Version 2 records write it as `{"format": "plain" | "xhtml", "value": "…"}`, version 1 records
/// as a plain string.
public struct AnnotationText: Hashable, Sendable {
    /// `plain` or `xhtml`.
    public struct Format: WireEnum {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let plain: Format = "plain"
        public static let xhtml: Format = "xhtml"
    }

    public var format: Format
    public var value: String

    public init(format: Format = .plain, value: String) {
        self.format = format
        self.value = value
    }

    init?(json: JSONValue) {
        if let string = json.stringValue {
            self.init(format: .plain, value: string)
        } else if let format = json["format"]?.stringValue, let value = json["value"]?.stringValue {
            self.init(format: Format(rawValue: format), value: value)
        } else {
            return nil
        }
    }

    func json(version: Int) -> JSONValue {
        version < 2 ? .string(value) : ["format": .string(format.rawValue), "value": .string(value)]
    }
}

/// The strokes of an ink annotation: lines of points, each point with an intensity (pressure).
public struct InkLines: Hashable, Sendable {
    /// The strokes, each a list of points.
    public var points: [[Point]]
    /// For each point of each stroke, its intensity between 0 and 1 (0.5 when unknown).
    public var intensities: [[Double]]

    public init(points: [[Point]], intensities: [[Double]]? = nil) {
        self.points = points
        self.intensities = intensities ?? points.map { Array(repeating: 0.5, count: $0.count) }
    }

    init?(json: JSONValue) {
        guard let strokes = json["points"]?.arrayValue else { return nil }
        var points: [[Point]] = []
        for stroke in strokes {
            guard let elements = stroke.arrayValue else { return nil }
            var line: [Point] = []
            for element in elements {
                guard let point = Point(json: element) else { return nil }
                line.append(point)
            }
            points.append(line)
        }
        let intensities = json["intensities"]?.arrayValue?.map { $0.arrayValue?.compactMap(\.doubleValue) ?? [] }
        self.init(points: points, intensities: intensities)
    }

    var json: JSONValue {
        [
            "points": .array(points.map { .array($0.map(\.json)) }),
            "intensities": .array(intensities.map { .array($0.map(JSONValue.number)) }),
        ]
    }
}
