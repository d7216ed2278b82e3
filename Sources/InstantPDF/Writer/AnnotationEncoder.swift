import Foundation
import InstantJSON

/// Instant JSON records as PDF annotation dictionaries: the inverse of the reader's mapping in
/// `PDFDocument+Annotations.swift`, so that reading a written annotation gives the record back.
///
/// What PDF cannot hold is left out (documented normalisations): a stamp's `subtitle`, a note's
/// `text.format`, `customData` other than an unknown annotation's `pdfSubtype`, and members the
/// reader does not read (`group`, `isCommentThreadRoot`, …), which the server keeps in its records.
struct AnnotationEncoder {
    let space: PageSpace
    /// The page object, for `/P`.
    let page: PDFReference?
    /// Page objects by index, for the destinations of `goTo` actions.
    let pageReferences: [PDFReference?]

    /// The annotation dictionary without `/AP` (the writer adds the appearance), or `nil` for
    /// records that are not written as annotations (widgets are written through their fields).
    func dictionary(for annotation: Annotation) -> PDFDictionary? {
        let type = annotation.type
        guard let subtype = Self.subtype(of: annotation) else { return nil }
        var dictionary = PDFDictionary(["Type": .name("Annot"), "Subtype": .name(subtype)])
        dictionary["Rect"] = rectangle(space.userRect(annotation.bbox))
        dictionary["P"] = page.map(PDFObject.reference)
        dictionary["NM"] = .text(annotation.name ?? annotation.id ?? "")
        dictionary["F"] = .integer(Self.flagBits(annotation.flags ?? []))
        if let opacity = annotation.opacity { dictionary["CA"] = .number(min(max(0, opacity), 1)) }
        if let author = annotation.creatorName { dictionary["T"] = .text(author) }
        if let created = annotation.createdAt.flatMap(Self.pdfDate) { dictionary["CreationDate"] = .string(created) }
        if let modified = annotation.updatedAt.flatMap(Self.pdfDate) { dictionary["M"] = .string(modified) }
        func set(_ key: String, _ value: PDFObject?) { if let value { dictionary[key] = value } }
        set("Contents", annotation.note.map(PDFObject.text))
        switch type {
        case .note:
            set("Contents", .text(annotation.text?.value ?? ""))
            dictionary["Name"] = .name(Self.noteIconName(annotation.icon))
            set("C", annotation.color.map(color))
        case .text:
            set("Contents", .text(annotation.text?.value ?? ""))
            var appearance = "/Helv \(PDFSerializer.number(annotation.fontSize ?? 12)) Tf"
            if let fontColor = annotation.fontColor {
                let components = [fontColor.red, fontColor.green, fontColor.blue].map {
                    PDFSerializer.number(Double($0) / 255)
                }
                appearance += " \(components.joined(separator: " ")) rg"
            }
            dictionary["DA"] = .string(Data(appearance.utf8))
            dictionary["Q"] = .integer(
                ["left", "center", "right"].firstIndex(of: annotation.horizontalAlign ?? "") ?? 0)
            set("C", annotation.backgroundColor.map(color))
            if case .object(let callout)? = annotation["callout"] { addCallout(callout, to: &dictionary) }
        case .highlight, .underline, .squiggly, .strikeOut, .redaction:
            // Markup without rects covers its bbox; a redaction without rects redacts its bbox anyway.
            if let rects = annotation.rects ?? (type == .redaction ? nil : [annotation.bbox]) {
                dictionary["QuadPoints"] = .array(rects.flatMap(quadPoints))
            }
            if type == .redaction {
                set("IC", annotation.fillColor.map(color))
                if case .string(let hex)? = annotation["outlineColor"], let outline = RGBColor(hex: hex) {
                    dictionary["OC"] = color(outline)
                }
                if case .string(let text)? = annotation["overlayText"] { dictionary["OverlayText"] = .text(text) }
            } else {
                set("C", annotation.color.map(color))
            }
        case .ink:
            dictionary["InkList"] = .array(
                (annotation.lines?.points ?? []).map { stroke in .array(stroke.flatMap(coordinates)) })
            dictionary["BS"] = .dictionary(PDFDictionary(["W": .number(annotation.lineWidth ?? 1)]))
            set("C", annotation.strokeColor.map(color))
        case .line, .polygon, .polyline, .rectangle, .ellipse:
            if type == .line {
                let start = annotation.startPoint ?? Point(x: annotation.bbox.left, y: annotation.bbox.top)
                let end = annotation.endPoint ?? start
                dictionary["L"] = .array(coordinates(start) + coordinates(end))
            }
            if type == .polygon || type == .polyline {
                dictionary["Vertices"] = .array((annotation.points ?? []).flatMap(coordinates))
            }
            if type == .line || type == .polyline, let caps = annotation.lineCaps {
                dictionary["LE"] = .array([
                    .name(Self.lineEndingName(caps.start)), .name(Self.lineEndingName(caps.end)),
                ])
            }
            set("C", annotation.strokeColor.map(color))
            set("IC", annotation.fillColor.map(color))
            var border = PDFDictionary(["W": .number(annotation.strokeWidth ?? 1), "S": .name("S")])
            if let dashes = annotation.strokeDashArray, !dashes.isEmpty {
                border["S"] = .name("D")
                border["D"] = .array(dashes.map(PDFObject.number))
            }
            dictionary["BS"] = .dictionary(border)
        case .stamp:
            let stampType = annotation.stampType ?? .draft
            let name = stampType == .custom ? (annotation.title ?? "Custom") : stampType.rawValue
            dictionary["Name"] = .name(name)
            set("C", annotation.color.map(color))
        case .image:
            dictionary["IT"] = .name("StampImage")
        case .link:
            set("A", annotation.action.map { .dictionary(action($0, depth: 0)) })
            if case .string(let hex)? = annotation["borderColor"], let border = RGBColor(hex: hex) {
                dictionary["C"] = color(border)
            }
            // A link without `borderWidth` keeps the PDF default (no /Border), as the reader reads it.
            if let borderWidth = annotation["borderWidth"]?.doubleValue {
                dictionary["Border"] = .array([.integer(0), .integer(0), .number(borderWidth)])
            }
        default:
            break
        }
        return dictionary
    }

    /// A comment as the note annotation that carries it in a PDF (with `/IRT`) and in XFDF (with
    /// `inreplyto`): on its root's page, a 20-point square at the root's top left corner.
    static func replyNote(for comment: Comment, root: Annotation) -> Annotation {
        let box = root.bbox
        var note = Annotation(
            type: .note, pageIndex: root.pageIndex, bbox: Rect(left: box.left, top: box.top, width: 20, height: 20),
            id: comment.id)
        note.text = AnnotationText(value: comment.text?.value ?? "")
        note.creatorName = comment.creatorName
        note.createdAt = comment.createdAt
        note.updatedAt = comment.updatedAt
        note.icon = "comment"
        return note
    }

    /// The PDF subtype of a record, or `nil` for records not written as annotations.
    static func subtype(of annotation: Annotation) -> String? {
        switch annotation.type {
        case .note: return "Text"
        case .text: return "FreeText"
        case .line: return "Line"
        case .rectangle: return "Square"
        case .ellipse: return "Circle"
        case .polygon: return "Polygon"
        case .polyline: return "PolyLine"
        case .highlight: return "Highlight"
        case .underline: return "Underline"
        case .squiggly: return "Squiggly"
        case .strikeOut: return "StrikeOut"
        case .ink: return "Ink"
        case .stamp, .image: return "Stamp"
        case .link: return "Link"
        case .redaction: return "Redact"
        case .unknown:
            if case .object(let data)? = annotation.customData, case .string(let subtype)? = data["pdfSubtype"],
                !subtype.isEmpty
            {
                return subtype
            }
            return nil
        default: return nil
        }
    }

    // MARK: - Values

    func rectangle(_ rect: PDFRect) -> PDFObject {
        .array([rect.minX, rect.minY, rect.maxX, rect.maxY].map(PDFObject.number))
    }

    func coordinates(_ point: Point) -> [PDFObject] {
        let user = space.userPoint(point)
        return [.number(user.x), .number(user.y)]
    }

    /// Upper left, upper right, lower left, lower right: the order viewers expect.
    func quadPoints(_ rect: Rect) -> [PDFObject] {
        let box = space.userRect(rect)
        return [box.minX, box.maxY, box.maxX, box.maxY, box.minX, box.minY, box.maxX, box.minY].map(PDFObject.number)
    }

    func color(_ color: RGBColor) -> PDFObject {
        .array([color.red, color.green, color.blue].map { .number((Double($0) / 255 * 10_000).rounded() / 10_000) })
    }

    private func addCallout(_ callout: JSONObject, to dictionary: inout PDFDictionary) {
        let points = ["start", "knee", "end"].compactMap { callout[$0].flatMap(Self.point) }
        guard points.count >= 2 else { return }
        dictionary["CL"] = .array(points.flatMap(coordinates))
        dictionary["IT"] = .name("FreeTextCallout")
        if case .array(let insets)? = callout["innerRectInset"] {
            let values = insets.compactMap(\.doubleValue)
            if values.count == 4 { dictionary["RD"] = .array(values.map(PDFObject.number)) }
        }
        if case .string(let cap)? = callout["cap"] {
            dictionary["LE"] = .name(Self.lineEndingName(LineCap(rawValue: cap)))
        }
    }

    private static func point(_ value: JSONValue) -> Point? {
        guard case .array(let pair) = value, pair.count == 2, let x = pair[0].doubleValue, let y = pair[1].doubleValue
        else { return nil }
        return Point(x: x, y: y)
    }

    /// An action as a PDF action dictionary, with its `subAction` as `/Next`.
    func action(_ action: Action, depth: Int) -> PDFDictionary {
        var dictionary = PDFDictionary(["Type": .name("Action")])
        func string(_ key: String) -> String {
            if case .string(let value)? = action.json[key] { return value }
            return ""
        }
        switch action.kind {
        case .uri:
            dictionary["S"] = .name("URI")
            dictionary["URI"] = .string(Data((action.uri ?? "").utf8))
        case .goTo:
            dictionary["S"] = .name("GoTo")
            let index = action.pageIndex ?? 0
            let target: PDFObject =
                index >= 0 && index < pageReferences.count
                ? (pageReferences[index].map(PDFObject.reference) ?? .integer(index)) : .integer(0)
            dictionary["D"] = .array([target, .name("Fit")])
        case .goToRemote:
            dictionary["S"] = .name("GoToR")
            dictionary["F"] = .text(action.relativePath ?? "")
            dictionary["D"] = action.namedDestination.map(PDFObject.text) ?? .array([.integer(0), .name("Fit")])
        case .goToEmbedded:
            dictionary["S"] = .name("GoToE")
            dictionary["F"] = .text(action.relativePath ?? "")
            dictionary["D"] = .array([.integer(0), .name("Fit")])
        case .launch:
            dictionary["S"] = .name("Launch")
            dictionary["F"] = .text(action.filePath ?? "")
        case .named:
            let name = action.namedAction ?? ""
            dictionary["S"] = .name("Named")
            dictionary["N"] = .name(name.prefix(1).uppercased() + name.dropFirst())
        case .javaScript:
            dictionary["S"] = .name("JavaScript")
            dictionary["JS"] = .text(action.script ?? "")
        case .resetForm:
            dictionary["S"] = .name("ResetForm")
        case .submitForm:
            dictionary["S"] = .name("SubmitForm")
            dictionary["F"] = .dictionary(PDFDictionary(["FS": .name("URL"), "F": .text(string("uri"))]))
        case .hide:
            dictionary["S"] = .name("Hide")
            if case .bool(let hide)? = action.json["hide"] { dictionary["H"] = .bool(hide) }
        default:
            dictionary["S"] = .name("Named")
            dictionary["N"] = .name("NextPage")
        }
        if depth < 16, let next = action.subAction {
            dictionary["Next"] = .dictionary(self.action(next, depth: depth + 1))
        }
        return dictionary
    }

    // MARK: - Names

    /// `/F` bits (ISO 32000-1, 12.5.3): Print is set unless the record says `noPrint`.
    static func flagBits(_ flags: [AnnotationFlag]) -> Int {
        let bits: [(AnnotationFlag, Int)] = [
            (.invisible, 0), (.hidden, 1), (.noZoom, 3), (.noRotate, 4), (.noView, 5), (.readOnly, 6), (.locked, 7),
            (.toggleNoView, 8), (.lockedContents, 9),
        ]
        var value = flags.contains(.noPrint) ? 0 : 1 << 2
        for (flag, bit) in bits where flags.contains(flag) { value |= 1 << bit }
        return value
    }

    static func noteIconName(_ icon: String?) -> String {
        let names = [
            "comment": "Comment", "key": "Key", "note": "Note", "help": "Help", "newParagraph": "NewParagraph",
            "paragraph": "Paragraph", "insert": "Insert", "check": "Check", "circle": "Circle", "cross": "Cross",
            "star": "Star", "rightArrow": "RightArrow", "rightPointer": "RightPointer",
        ]
        return icon.flatMap { names[$0] } ?? "Comment"
    }

    static func lineEndingName(_ cap: LineCap?) -> String {
        switch cap {
        case .square?: return "Square"
        case .circle?: return "Circle"
        case .diamond?: return "Diamond"
        case .openArrow?: return "OpenArrow"
        case .closedArrow?: return "ClosedArrow"
        case .butt?: return "Butt"
        case .reverseOpenArrow?: return "ROpenArrow"
        case .reverseClosedArrow?: return "RClosedArrow"
        case .slash?: return "Slash"
        default: return "None"
        }
    }

    /// An ISO 8601 date as a PDF date (`D:YYYYMMDDHHmmSS+HH'mm'`), keeping its offset.
    static func pdfDate(_ iso: String) -> Data? {
        guard InstantDate.parse(iso) != nil else { return nil }
        let digits = iso.prefix(19).filter(\.isNumber)
        guard digits.count == 14 else { return nil }
        var zone = "Z"
        if let sign = iso.dropFirst(19).first(where: { $0 == "+" || $0 == "-" }),
            let index = iso.lastIndex(of: sign), index > iso.index(iso.startIndex, offsetBy: 18)
        {
            let offset = iso[iso.index(after: index)...].filter(\.isNumber)
            if offset.count == 4 { zone = "\(sign)\(offset.prefix(2))'\(offset.suffix(2))'" }
        }
        return Data("D:\(digits)\(zone)".utf8)
    }
}
