import Foundation

/// An annotation record: ink, markup, note, free text, shape, image, stamp, link, widget, …
///
/// The members every annotation shares are typed properties here; members of particular types
/// are typed properties too (`lines` of ink, `rects` of markup, `text` of notes, …) and are `nil`
/// where a record does not have them. Every member, known or not, is kept in ``json``.
public struct Annotation: InstantRecord {
    public var json: JSONObject

    public init(uncheckedJSON: JSONObject) { self.json = uncheckedJSON }

    /// A new version 2 annotation of the given type on a page.
    public init(type: AnnotationType, pageIndex: Int, bbox: Rect, id: String? = nil) {
        json = ["v": 2, "type": .string(type.rawValue), "pageIndex": .integer(Int64(pageIndex)), "bbox": bbox.json]
        if let id { json["id"] = .string(id) }
    }

    // MARK: Members of every annotation

    /// The format version of the record: 1 or 2.
    public var version: Int {
        get { int("v") ?? 2 }
        set { set("v", newValue) }
    }

    public var type: AnnotationType {
        get { AnnotationType(rawValue: string("type") ?? "") }
        set { set("type", newValue.rawValue) }
    }

    /// The record id: a ULID for new annotations, the stringified `pdfObjectId` for originals of the PDF.
    public var id: String? {
        get { string("id") }
        set { set("id", newValue) }
    }

    /// The zero-based page.
    public var pageIndex: Int {
        get { int("pageIndex") ?? 0 }
        set { set("pageIndex", newValue) }
    }

    /// The bounding box in page points, origin at the top left.
    public var bbox: Rect {
        get { json["bbox"].flatMap(Rect.init(json:)) ?? Rect(left: 0, top: 0, width: 0, height: 0) }
        set { json["bbox"] = newValue.json }
    }

    /// Between 0 (invisible) and 1 (opaque).
    public var opacity: Double? {
        get { double("opacity") }
        set { set("opacity", newValue) }
    }

    /// The object number of the original in the PDF, for annotations that came from the PDF.
    public var pdfObjectId: Int? {
        get { int("pdfObjectId") }
        set { set("pdfObjectId", newValue) }
    }

    public var flags: [AnnotationFlag]? {
        get { json["flags"]?.arrayValue?.compactMap { $0.stringValue.map(AnnotationFlag.init(rawValue:)) } }
        set { json["flags"] = newValue.map { .array($0.map { .string($0.rawValue) }) } }
    }

    /// The creation date as written (ISO 8601); ``createdAtDate`` converts it.
    public var createdAt: String? {
        get { string("createdAt") }
        set { set("createdAt", newValue) }
    }

    /// The last modification date as written (ISO 8601); ``updatedAtDate`` converts it.
    public var updatedAt: String? {
        get { string("updatedAt") }
        set { set("updatedAt", newValue) }
    }

    public var createdAtDate: Date? {
        get { createdAt.flatMap(InstantDate.parse) }
        set { createdAt = newValue.map(InstantDate.string(from:)) }
    }

    public var updatedAtDate: Date? {
        get { updatedAt.flatMap(InstantDate.parse) }
        set { updatedAt = newValue.map(InstantDate.string(from:)) }
    }

    /// A name unique on the page (the PDF's /NM).
    public var name: String? {
        get { string("name") }
        set { set("name", newValue) }
    }

    public var creatorName: String? {
        get { string("creatorName") }
        set { set("creatorName", newValue) }
    }

    /// The annotation's note (the PDF's /Contents for most types).
    public var note: String? {
        get { string("note") }
        set { set("note", newValue) }
    }

    /// Free-form data of the app, kept as it is.
    public var customData: JSONValue? {
        get { json["customData"] }
        set { json["customData"] = newValue }
    }

    /// The group of the record, for collaboration permissions.
    public var group: String? {
        get { string("group") }
        set { set("group", newValue) }
    }

    public var isCommentThreadRoot: Bool? {
        get { bool("isCommentThreadRoot") }
        set { set("isCommentThreadRoot", newValue) }
    }

    public var blendMode: BlendMode? {
        get { string("blendMode").map(BlendMode.init(rawValue:)) }
        set { set("blendMode", newValue?.rawValue) }
    }

    public var action: Action? {
        get { json["action"]?.objectValue.map(Action.init(uncheckedJSON:)) }
        set { json["action"] = newValue?.jsonValue }
    }

    /// Rotation in degrees: 0, 90, 180 or 270 (text, stamps, images, widgets, redactions).
    public var rotation: Int? {
        get { int("rotation") }
        set { set("rotation", newValue) }
    }

    // MARK: Members of some types

    /// The text of notes, free text and comment markers.
    public var text: AnnotationText? {
        get { json["text"].flatMap(AnnotationText.init(json:)) }
        set { json["text"] = newValue?.json(version: version) }
    }

    /// The strokes of ink annotations.
    public var lines: InkLines? {
        get { json["lines"].flatMap(InkLines.init(json:)) }
        set { json["lines"] = newValue?.json }
    }

    /// The line width of ink annotations.
    public var lineWidth: Double? {
        get { double("lineWidth") }
        set { set("lineWidth", newValue) }
    }

    /// The stroke width of shapes.
    public var strokeWidth: Double? {
        get { double("strokeWidth") }
        set { set("strokeWidth", newValue) }
    }

    /// The dash pattern of shapes, in points.
    public var strokeDashArray: [Double]? {
        get { json["strokeDashArray"]?.arrayValue?.compactMap(\.doubleValue) }
        set { json["strokeDashArray"] = newValue.map { .array($0.map(JSONValue.number)) } }
    }

    /// The stroke color of ink and shapes.
    public var strokeColor: RGBColor? {
        get { color("strokeColor") }
        set { set("strokeColor", newValue) }
    }

    /// The fill color of shapes and redactions.
    public var fillColor: RGBColor? {
        get { color("fillColor") }
        set { set("fillColor", newValue) }
    }

    /// The color of text markup, notes, stamps and comment markers.
    public var color: RGBColor? {
        get { color("color") }
        set { set("color", newValue) }
    }

    public var backgroundColor: RGBColor? {
        get { color("backgroundColor") }
        set { set("backgroundColor", newValue) }
    }

    /// The text color of free text and widgets.
    public var fontColor: RGBColor? {
        get { color("fontColor") }
        set { set("fontColor", newValue) }
    }

    /// The marked areas of text markup and redactions.
    public var rects: [Rect]? {
        get { json["rects"]?.arrayValue?.compactMap(Rect.init(json:)) }
        set { json["rects"] = newValue.map { .array($0.map(\.json)) } }
    }

    /// The vertices of polygons and polylines.
    public var points: [Point]? {
        get { json["points"]?.arrayValue?.compactMap(Point.init(json:)) }
        set { json["points"] = newValue.map { .array($0.map(\.json)) } }
    }

    /// The start of a line.
    public var startPoint: Point? {
        get { json["startPoint"].flatMap(Point.init(json:)) }
        set { json["startPoint"] = newValue?.json }
    }

    /// The end of a line.
    public var endPoint: Point? {
        get { json["endPoint"].flatMap(Point.init(json:)) }
        set { json["endPoint"] = newValue?.json }
    }

    /// The ends of lines and polylines.
    public var lineCaps: (start: LineCap?, end: LineCap?)? {
        get {
            guard let caps = json["lineCaps"] else { return nil }
            return (
                caps["start"]?.stringValue.map(LineCap.init(rawValue:)),
                caps["end"]?.stringValue.map(LineCap.init(rawValue:))
            )
        }
        set {
            guard let newValue else { return json["lineCaps"] = nil }
            var caps: JSONObject = [:]
            caps["start"] = newValue.start.map { .string($0.rawValue) }
            caps["end"] = newValue.end.map { .string($0.rawValue) }
            json["lineCaps"] = .object(caps)
        }
    }

    /// The icon of notes and comment markers (`comment`, `note`, `help`, …).
    public var icon: String? {
        get { string("icon") }
        set { set("icon", newValue) }
    }

    /// The font size of free text and widgets.
    public var fontSize: Double? {
        get { double("fontSize") }
        set { set("fontSize", newValue) }
    }

    /// The font of free text and widgets (a standard font name such as `Helvetica`).
    public var font: String? {
        get { string("font") }
        set { set("font", newValue) }
    }

    public var horizontalAlign: String? {
        get { string("horizontalAlign") }
        set { set("horizontalAlign", newValue) }
    }

    public var verticalAlign: String? {
        get { string("verticalAlign") }
        set { set("verticalAlign", newValue) }
    }

    /// The stamp of stamp annotations.
    public var stampType: StampType? {
        get { string("stampType").map(StampType.init(rawValue:)) }
        set { set("stampType", newValue?.rawValue) }
    }

    /// The title of custom stamps.
    public var title: String? {
        get { string("title") }
        set { set("title", newValue) }
    }

    public var subtitle: String? {
        get { string("subtitle") }
        set { set("subtitle", newValue) }
    }

    /// The attachment (SHA-256 key) holding the image of image annotations.
    public var imageAttachmentId: String? {
        get { string("imageAttachmentId") }
        set { set("imageAttachmentId", newValue) }
    }

    /// The content type of the image of image annotations.
    public var contentType: String? {
        get { string("contentType") }
        set { set("contentType", newValue) }
    }

    /// The form field of widgets.
    public var formFieldName: String? {
        get { string("formFieldName") }
        set { set("formFieldName", newValue) }
    }

    public static func validationErrors(of value: JSONValue, at path: String) -> [InstantJSONError] {
        let version = value["v"]?.intValue ?? 2
        let type = AnnotationType(rawValue: value["type"]?.stringValue ?? "")
        return objectErrors(value, at: path, rules: AnnotationSchema.rules(for: type, version: version))
    }
}
