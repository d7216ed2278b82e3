import Foundation
import InstantJSON

/// The records read from an XFDF document, and what was left out of them.
public struct XFDFImport: Sendable {
    /// Annotations, comments (replies with `inreplyto`), form field values, attachments of image
    /// stamps, and the PDF identity of `<ids>`.
    public var records: InstantDocumentJSON
    /// One line for each element that was left out, with its line number and why.
    public var skipped: [String]

    /// Whether a file is XML (XFDF) rather than JSON: its first character after white space and a
    /// UTF-8 byte order mark is `<`.
    public static func isXML(_ data: Data) -> Bool {
        data.drop { [0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D].contains($0) }.first == UInt8(ascii: "<")
    }
}

extension PDFDocument {
    /// Reads an XFDF document (XFDF 3.0, ISO 19444-1) written for this PDF as Instant JSON records.
    ///
    /// Each annotation element is read as the PDF annotation dictionary it stands for, by the same
    /// code that reads the PDF's own annotations, with the coordinates of its page. A record's id
    /// is the element's `name` when that is a usable id (1 to 256 bytes, no slash, no control
    /// character, not repeated), a new ULID otherwise. Text annotations with `inreplyto` become
    /// comments of the named annotation's thread (a reply to a name the file does not have stays
    /// a note). `<fields>` become form field values, with the names of nested fields joined by dots.
    /// Popups, `<appearance>` streams and rich text markup are not kept (the rich text's plain text
    /// is); elements of annotation types Instant JSON has no type for are skipped and listed.
    ///
    /// - Throws: ``XFDFError`` naming the element and line when the XML is malformed, the root is
    ///   not `<xfdf>`, or an annotation has no usable `page` or `rect` or a malformed value.
    public func xfdfRecords(
        _ data: Data, limits: XFDFLimits = .default, identifiers: ULIDGenerator = .shared
    ) throws(XFDFError) -> XFDFImport {
        let tree = try XMLTree(data, limits: limits)
        var reader = XFDFReader(document: self, identifiers: identifiers)
        return try reader.read(tree.root)
    }
}

/// Reads the elements of an XFDF document as PDF annotation dictionaries, then as records.
struct XFDFReader {
    typealias Element = XMLTree.Element

    let document: PDFDocument
    let identifiers: ULIDGenerator
    private var records = InstantDocumentJSON()
    private var skipped: [String] = []
    private var usedIDs: Set<String> = []
    /// The PDF's form fields by fully qualified name.
    private let fields: [String: FormField]

    init(document: PDFDocument, identifiers: ULIDGenerator) {
        self.document = document
        self.identifiers = identifiers
        fields = Dictionary(
            document.formRecords().fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    mutating func read(_ root: Element) throws(XFDFError) -> XFDFImport {
        guard root.name.lowercased() == "xfdf" else {
            throw XFDFError("the root element is <\(root.name)>, not <xfdf>: this is not an XFDF file", line: root.line)
        }
        var idsByName: [String: String] = [:]
        var replies: [(annotation: Annotation, parent: String, line: Int)] = []
        for element in root.child("annots")?.children ?? [] {
            guard let subtype = XFDFVocabulary.subtype(ofElement: element.name) else {
                let why =
                    XFDFVocabulary.unsupportedElements.contains(element.name.lowercased())
                    ? "Instant JSON has no annotation type for it" : "it is not an annotation element of XFDF"
                skipped.append("line \(element.line): <\(element.name)> skipped: \(why)")
                continue
            }
            var annotation = try self.annotation(element, subtype: subtype)
            let name = element.attribute("name")
            let id =
                name.flatMap { usedIDs.contains($0) || !Self.isUsableID($0) ? nil : $0 } ?? identifiers.next().string
            usedIDs.insert(id)
            annotation.id = id
            if let name, idsByName[name] == nil { idsByName[name] = id }
            if annotation.type == .image, let imageData = element.child("imagedata") {
                try attachImage(imageData, to: &annotation)
            }
            if subtype == "Text", let parent = element.attribute("inreplyto"),
                element.attribute("replyType")?.lowercased() != "group"
            {
                replies.append((annotation, parent, element.line))
            } else {
                records.annotations.append(annotation)
            }
        }
        var roots = Set<String>()
        for reply in replies {
            guard let rootID = idsByName[reply.parent], records.annotations.contains(where: { $0.id == rootID }) else {
                records.annotations.append(reply.annotation)
                continue
            }
            roots.insert(rootID)
            records.comments.append(PDFDocument.comment(replying: reply.annotation, to: rootID))
        }
        for index in records.annotations.indices where roots.contains(records.annotations[index].id ?? "") {
            records.annotations[index].isCommentThreadRoot = true
        }
        if let fields = root.child("fields") { readFields(fields.children, prefix: nil) }
        if let ids = root.child("ids"), let original = ids.attribute("original").flatMap(Self.bytes(hex:)),
            let modified = ids.attribute("modified").flatMap(Self.bytes(hex:))
        {
            records.pdfId = PDFId(permanent: original, changing: modified)
        }
        return XFDFImport(records: records, skipped: skipped)
    }

    // MARK: - Annotations

    /// The record of an annotation element: its PDF dictionary read as the PDF's own are.
    private func annotation(_ element: Element, subtype: String) throws(XFDFError) -> Annotation {
        func fail(_ message: String) -> XFDFError {
            XFDFError("<\(element.name)>: \(message)", line: element.line)
        }
        guard let pageText = element.attribute("page") else { throw fail("it has no 'page' attribute") }
        guard let pageIndex = Int(pageText.trimmingCharacters(in: .whitespaces)), pageIndex >= 0 else {
            throw fail("'page' must be a page index from 0, not '\(pageText)'")
        }
        guard pageIndex < document.pageCount else {
            throw fail("page \(pageIndex) is not in the document, which has \(document.pageCount) pages (from 0)")
        }
        var dictionary = PDFDictionary(["Type": .name("Annot"), "Subtype": .name(subtype)])
        func numbers(_ attribute: String, counts: Set<Int>? = nil, multipleOf step: Int = 1) throws(XFDFError)
            -> [Double]?
        {
            guard let text = element.attribute(attribute) else { return nil }
            guard let values = XFDFVocabulary.parseNumbers(text),
                counts.map({ $0.contains(values.count) }) ?? (values.count % step == 0)
            else {
                let expected =
                    counts.map { "\($0.sorted().map(String.init).joined(separator: " or ")) numbers" }
                    ?? "numbers in groups of \(step)"
                throw fail("'\(attribute)' must be \(expected) separated by commas, not '\(text.prefix(80))'")
            }
            return values
        }
        func color(_ attribute: String) throws(XFDFError) -> PDFObject? {
            guard let text = element.attribute(attribute) else { return nil }
            if text.lowercased() == "transparent" || text.isEmpty { return nil }
            guard let color = RGBColor(hex: text) else {
                throw fail("'\(attribute)' must be a color such as #FF8000, not '\(text.prefix(40))'")
            }
            return .array([color.red, color.green, color.blue].map { .number(Double($0) / 255) })
        }
        func set(_ key: String, _ value: PDFObject?) { if let value { dictionary[key] = value } }
        guard let rect = try numbers("rect", counts: [4]) else { throw fail("it has no 'rect' attribute") }
        dictionary["Rect"] = .array(rect.map(PDFObject.number))
        set("NM", element.attribute("name").map(PDFObject.text))
        dictionary["F"] = .integer(element.attribute("flags").map(XFDFVocabulary.flagBits) ?? 0)
        set("C", try color("color"))
        set("IC", try color("interior-color"))
        set("OC", try color("outline-color"))
        if let opacity = try numbers("opacity", counts: [1]) { dictionary["CA"] = .number(opacity[0]) }
        set("T", element.attribute("title").map(PDFObject.text))
        set("CreationDate", element.attribute("creationdate").map(PDFObject.text))
        set("M", element.attribute("date").map(PDFObject.text))
        set("Name", element.attribute("icon").map(PDFObject.name))
        set("IT", element.attribute("intent").map(PDFObject.name))
        if let justification = element.attribute("justification") {
            dictionary["Q"] = .integer(XFDFVocabulary.justifications.firstIndex(of: justification.lowercased()) ?? 0)
        }
        set("QuadPoints", try numbers("coords", multipleOf: 8).map { .array($0.map(PDFObject.number)) })
        set("CL", try numbers("callout", counts: [4, 6]).map { .array($0.map(PDFObject.number)) })
        set("RD", try numbers("fringe", counts: [4]).map { .array($0.map(PDFObject.number)) })
        if let start = try numbers("start", counts: [2]), let end = try numbers("end", counts: [2]) {
            dictionary["L"] = .array((start + end).map(PDFObject.number))
        }
        let head = element.attribute("head")
        let tail = element.attribute("tail")
        if subtype == "FreeText" {
            set("LE", head.map(PDFObject.name))
        } else if head != nil || tail != nil {
            dictionary["LE"] = .array([.name(head ?? "None"), .name(tail ?? "None")])
        }
        let width = try numbers("width", counts: [1])
        let dashes = try numbers("dashes")
        if width != nil || dashes != nil || element.attribute("style") != nil {
            var border = PDFDictionary(["W": .number(width?[0] ?? 1)])
            let style = element.attribute("style")?.lowercased()
            border["S"] = .name(XFDFVocabulary.borderStyles.first { $0.value == style }?.key ?? "S")
            if let dashes {
                border["S"] = .name("D")
                border["D"] = .array(dashes.map(PDFObject.number))
            }
            dictionary["BS"] = .dictionary(border)
        }
        set("OverlayText", element.attribute("overlay-text").map(PDFObject.text))
        if let contents = element.child("contents") ?? element.child("contents-richtext") {
            dictionary["Contents"] = .text(contents.allText)
        }
        set("DA", element.child("defaultappearance").map { .text($0.text) })
        if let inkList = element.child("inklist") {
            var strokes: [PDFObject] = []
            for gesture in inkList.children where gesture.name.lowercased() == "gesture" {
                guard let values = XFDFVocabulary.parseNumbers(gesture.text), values.count % 2 == 0 else {
                    throw XFDFError("<gesture>: points must be x,y pairs separated by semicolons", line: gesture.line)
                }
                strokes.append(.array(values.map(PDFObject.number)))
            }
            dictionary["InkList"] = .array(strokes)
        }
        if let vertices = element.child("vertices") {
            guard let values = XFDFVocabulary.parseNumbers(vertices.text), values.count % 2 == 0 else {
                throw XFDFError("<vertices>: points must be x,y pairs separated by semicolons", line: vertices.line)
            }
            dictionary["Vertices"] = .array(values.map(PDFObject.number))
        }
        if let action = element.child("OnActivation")?.child("Action") {
            dictionary["A"] = .dictionary(try self.action(action, depth: 0))
        }
        let page = document.pages[pageIndex]
        guard
            var annotation = document.annotation(
                dictionary, number: 0, page: page, space: PageSpace(cropBox: page.cropBox))
        else { throw fail("it could not be read as an annotation") }
        annotation.pdfObjectId = nil
        return annotation
    }

    /// `<imagedata>` of an image stamp: a `data:` URL of a JPEG or PNG, kept as its attachment.
    private mutating func attachImage(_ element: Element, to annotation: inout Annotation) throws(XFDFError) {
        let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("data:"), let comma = text.firstIndex(of: ","),
            text[..<comma].hasSuffix(";base64"),
            let bytes = Data(
                base64Encoded: String(text[text.index(after: comma)...]), options: .ignoreUnknownCharacters)
        else {
            throw XFDFError("<imagedata>: expected a base64 data URL (data:image/png;base64,…)", line: element.line)
        }
        let contentType = String(text.dropFirst(5).prefix { $0 != ";" }).lowercased()
        guard contentType == "image/jpeg" || contentType == "image/png" else {
            skipped.append(
                "line \(element.line): <imagedata> of type '\(contentType)' skipped: only JPEG and PNG are kept")
            return
        }
        let attachment = Attachment(data: bytes, contentType: contentType)
        records.attachments[attachment.key] = attachment
        annotation.imageAttachmentId = attachment.key
        annotation.contentType = contentType
    }

    // MARK: - Actions

    /// An `<Action>` element as a PDF action dictionary (a nested `<Action>` is its `/Next`).
    private func action(_ element: Element, depth: Int) throws(XFDFError) -> PDFDictionary {
        var dictionary = PDFDictionary(["Type": .name("Action")])
        guard let kind = element.children.first(where: { $0.name != "Action" }) else {
            throw XFDFError("<Action> has no action element (URI, GoTo, Named, …)", line: element.line)
        }
        func file() -> PDFObject { .text(kind.child("File")?.attribute("Name") ?? "") }
        switch kind.name.lowercased() {
        case "uri":
            dictionary["S"] = .name("URI")
            dictionary["URI"] = .string(Data((kind.attribute("Name") ?? "").utf8))
        case "goto":
            dictionary["S"] = .name("GoTo")
            dictionary["D"] = destination(kind.child("Dest"))
        case "gotor":
            dictionary["S"] = .name("GoToR")
            dictionary["F"] = file()
            dictionary["D"] = destination(kind.child("Dest"))
        case "gotoe":
            dictionary["S"] = .name("GoToE")
            dictionary["F"] = file()
        case "launch":
            dictionary["S"] = .name("Launch")
            dictionary["F"] = file()
        case "named":
            dictionary["S"] = .name("Named")
            dictionary["N"] = .name(kind.attribute("Name") ?? "")
        case "javascript":
            dictionary["S"] = .name("JavaScript")
            dictionary["JS"] = .text(kind.attribute("JS") ?? kind.allText)
        case "resetform":
            dictionary["S"] = .name("ResetForm")
        case "submitform":
            dictionary["S"] = .name("SubmitForm")
            dictionary["F"] = .dictionary(PDFDictionary(["FS": .name("URL"), "F": .text(kind.attribute("URL") ?? "")]))
        case "hide":
            dictionary["S"] = .name("Hide")
            dictionary["H"] = .bool(kind.attribute("Hide")?.lowercased() != "false")
        default:
            throw XFDFError("<\(kind.name)> is not an action this reader knows", line: kind.line)
        }
        if depth < 16, let next = element.child("Action") {
            dictionary["Next"] = .dictionary(try action(next, depth: depth + 1))
        }
        return dictionary
    }

    /// `<Dest>` as a destination: `[page /Fit]` for an element with `Page`, a string for `<Named>`.
    private func destination(_ element: Element?) -> PDFObject {
        guard let target = element?.children.first else { return .array([.integer(0), .name("Fit")]) }
        if target.name.lowercased() == "named" { return .text(target.attribute("Name") ?? "") }
        let page = target.attribute("Page").flatMap { Int($0) } ?? 0
        return .array([.integer(page), .name("Fit")])
    }

    // MARK: - Form field values

    /// `<field>` elements, nested by the parts of their names, as form field values.
    private mutating func readFields(_ elements: [Element], prefix: String?) {
        for element in elements where element.name.lowercased() == "field" {
            guard let part = element.attribute("name") else {
                skipped.append("line \(element.line): <field> without a name skipped")
                continue
            }
            let name = prefix.map { "\($0).\(part)" } ?? part
            let values = element.children.filter { $0.name.lowercased() == "value" }.map(\.allText)
            let richValue = element.child("value-richtext")?.allText
            let children = element.children.filter { $0.name.lowercased() == "field" }
            if !children.isEmpty {
                readFields(children, prefix: name)
                if values.isEmpty && richValue == nil { continue }
            }
            records.formFieldValues.append(formFieldValue(name, values: richValue.map { [$0] } ?? values))
        }
    }

    /// A field's values in the shape Instant JSON gives the PDF's field of that name: an array
    /// for check boxes (`null` when none is on) and for list and combo boxes (with the indexes of
    /// the selected options); a string or `null` for text fields, radio buttons and fields the PDF
    /// does not have (an array when there are several values).
    private func formFieldValue(_ name: String, values: [String]) -> FormFieldValue {
        let field = fields[name]
        switch field?.kind {
        case .checkBox?:
            return FormFieldValue(name: name, value: values.isEmpty ? .null : .array(values.map(JSONValue.string)))
        case .comboBox?, .listBox?:
            let options = field?.options ?? []
            let indexes = values.compactMap { value in options.firstIndex { $0.value == value } }
            return FormFieldValue(name: name, value: .array(values.map(JSONValue.string)), optionIndexes: indexes)
        default:
            switch values.count {
            case 0: return FormFieldValue(name: name, value: .null)
            case 1: return FormFieldValue(name: name, value: .string(values[0]))
            default: return FormFieldValue(name: name, value: .array(values.map(JSONValue.string)))
            }
        }
    }

    // MARK: - Values

    /// Whether an element `name` can be a record id (the server's rules for ids in paths).
    static func isUsableID(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256 && !name.contains("/") && !name.contains("\\") && !name.contains("..")
            && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0, digits.count <= 256 else { return nil }
        var bytes = Data()
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }
}
