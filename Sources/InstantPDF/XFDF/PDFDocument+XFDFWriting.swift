import Foundation
import InstantJSON

extension PDFDocument {
    /// The records as an XFDF document (XFDF 3.0, ISO 19444-1) for this PDF: annotations, comments
    /// as replies (`inreplyto`) to their thread's root, and form field values.
    ///
    /// XFDF gives coordinates in each page's PDF user space, which is why the PDF is needed. Each
    /// annotation is written as the PDF writer would write it into the file (the same keys, the same
    /// documented normalisations), then as its XFDF element. Left out, because XFDF has no place
    /// for them: bookmarks, form field definitions (XFDF carries their values), widgets, records of
    /// types Instant JSON does not know, and records on pages this PDF does not have. An image
    /// annotation carries its attachment as `<imagedata>` (a data URL) when `records.attachments`
    /// has it.
    ///
    /// - Parameter fileName: Written as `<f href>`, the file the XFDF belongs to.
    public func xfdf(_ records: InstantDocumentJSON, fileName: String? = nil) -> Data {
        var writer = XFDFWriter(document: self)
        writer.write(records, fileName: fileName)
        return Data(writer.output.utf8)
    }
}

/// Writes the elements of an XFDF document from the PDF annotation dictionaries of records.
struct XFDFWriter {
    let document: PDFDocument
    private(set) var output = ""
    private var indentation = 0
    private let pageIndexes: [PDFReference: Int]

    init(document: PDFDocument) {
        self.document = document
        var indexes: [PDFReference: Int] = [:]
        for page in document.pages { if let reference = page.reference { indexes[reference] = page.index } }
        pageIndexes = indexes
    }

    mutating func write(_ records: InstantDocumentJSON, fileName: String?) {
        output = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        open("xfdf", [("xmlns", XFDFVocabulary.namespace), ("xml:space", "preserve")])
        open("annots")
        var roots: [String: (annotation: Annotation, name: String)] = [:]
        for annotation in records.annotations {
            guard let name = write(annotation, attachments: records.attachments) else { continue }
            if let id = annotation.id { roots[id] = (annotation, name) }
        }
        for comment in records.comments {
            guard let root = roots[comment.rootId] else { continue }
            let note = AnnotationEncoder.replyNote(for: comment, root: root.annotation)
            write(note, attachments: [:], replyingTo: root.name)
        }
        close("annots")
        writeFields(records.formFieldValues)
        if let fileName { leaf("f", [("href", fileName)]) }
        if let pdfId = records.pdfId, let original = Self.hex(base64: pdfId.permanent),
            let modified = Self.hex(base64: pdfId.changing)
        {
            leaf("ids", [("original", original), ("modified", modified)])
        }
        close("xfdf")
    }

    // MARK: - Annotations

    /// Writes one annotation element and returns its `name`, or returns `nil` for a record XFDF
    /// has no element for.
    @discardableResult
    private mutating func write(
        _ annotation: Annotation, attachments: [String: Attachment], replyingTo root: String? = nil
    ) -> String? {
        guard annotation.type != .widget, annotation.type != .unknown,
            document.pages.indices.contains(annotation.pageIndex),
            let subtype = AnnotationEncoder.subtype(of: annotation),
            let element = XFDFVocabulary.elementNames[subtype]
        else { return nil }
        let page = document.pages[annotation.pageIndex]
        let encoder = AnnotationEncoder(
            space: PageSpace(cropBox: page.cropBox), page: nil, pageReferences: document.pages.map(\.reference))
        guard let dictionary = encoder.dictionary(for: annotation) else { return nil }
        let name = dictionary["NM"]?.textValue ?? ""
        var attributes = Self.attributes(of: dictionary, pageIndex: annotation.pageIndex)
        if let root {
            attributes += [("inreplyto", root), ("replyType", "reply")]
        }
        open(element, attributes)
        if let contents = dictionary["Contents"]?.textValue { leaf("contents", text: contents) }
        if let appearance = dictionary["DA"]?.textValue { leaf("defaultappearance", text: appearance) }
        if let strokes = dictionary["InkList"]?.arrayValue {
            open("inklist")
            for stroke in strokes { leaf("gesture", text: XFDFVocabulary.points(Self.numbers(stroke))) }
            close("inklist")
        }
        if let vertices = dictionary["Vertices"] {
            leaf("vertices", text: XFDFVocabulary.points(Self.numbers(vertices)))
        }
        if annotation.type == .image, let id = annotation.imageAttachmentId, let attachment = attachments[id] {
            leaf("imagedata", text: "data:\(attachment.contentType);base64,\(attachment.data.base64EncodedString())")
        }
        if let action = dictionary["A"]?.dictionaryValue {
            open("OnActivation")
            writeAction(action, depth: 0)
            close("OnActivation")
        }
        close(element)
        return name
    }

    /// The attributes of an annotation element, from its PDF dictionary.
    static func attributes(of dictionary: PDFDictionary, pageIndex: Int) -> [(String, String)] {
        var attributes: [(String, String)] = [("page", String(pageIndex))]
        func add(_ name: String, _ value: String?) { if let value { attributes.append((name, value)) } }
        func color(_ key: String) -> String? { PDFValues.color(dictionary[key], resolve: { $0 })?.hex }
        func list(_ key: String) -> String? { dictionary[key].map { XFDFVocabulary.numbers(numbers($0)) } }
        add("rect", list("Rect"))
        add("name", dictionary["NM"]?.textValue)
        add("flags", dictionary["F"]?.intValue.map(XFDFVocabulary.flags))
        add("color", color("C"))
        add("interior-color", color("IC"))
        add("opacity", dictionary["CA"]?.doubleValue.map(PDFSerializer.number))
        add("title", dictionary["T"]?.textValue)
        add("creationdate", dictionary["CreationDate"]?.textValue)
        add("date", dictionary["M"]?.textValue)
        add("icon", dictionary["Name"]?.nameValue)
        add("intent", dictionary["IT"]?.nameValue)
        add("justification", dictionary["Q"]?.intValue.map { XFDFVocabulary.justifications[min(max($0, 0), 2)] })
        add("coords", list("QuadPoints"))
        add("callout", list("CL"))
        add("fringe", list("RD"))
        if let line = dictionary["L"].map(numbers), line.count == 4 {
            add("start", XFDFVocabulary.numbers(Array(line[0...1])))
            add("end", XFDFVocabulary.numbers(Array(line[2...3])))
        }
        switch dictionary["LE"] {
        case .array(let ends)? where ends.count == 2:
            add("head", ends[0].nameValue)
            add("tail", ends[1].nameValue)
        case .name(let end)?:
            add("head", end)
        default: break
        }
        if let border = dictionary["BS"]?.dictionaryValue {
            add("width", border["W"]?.doubleValue.map(PDFSerializer.number))
            add("style", border["S"]?.nameValue.flatMap { XFDFVocabulary.borderStyles[$0] })
            add("dashes", border["D"].map { XFDFVocabulary.numbers(numbers($0)) })
        } else if let border = dictionary["Border"]?.arrayValue, border.count >= 3 {
            add("width", border[2].doubleValue.map(PDFSerializer.number))
        }
        add("overlay-text", dictionary["OverlayText"]?.textValue)
        add("outline-color", color("OC"))
        return attributes
    }

    private static func numbers(_ object: PDFObject) -> [Double] {
        object.arrayValue?.compactMap(\.doubleValue) ?? []
    }

    // MARK: - Actions

    /// An action dictionary as an `<Action>` element, its `/Next` as a nested `<Action>`.
    private mutating func writeAction(_ action: PDFDictionary, depth: Int) {
        open("Action")
        func file(_ key: String) -> [(String, String)] { [("Name", action[key]?.textValue ?? "")] }
        switch action["S"]?.nameValue {
        case "URI":
            leaf("URI", [("Name", action["URI"]?.stringData.map { String(decoding: $0, as: UTF8.self) } ?? "")])
        case "GoTo":
            open("GoTo")
            writeDestination(action["D"])
            close("GoTo")
        case "GoToR":
            open("GoToR")
            writeDestination(action["D"])
            leaf("File", file("F"))
            close("GoToR")
        case "GoToE":
            open("GoToE")
            leaf("File", file("F"))
            close("GoToE")
        case "Launch":
            open("Launch")
            leaf("File", file("F"))
            close("Launch")
        case "Named":
            leaf("Named", [("Name", action["N"]?.nameValue ?? "")])
        case "JavaScript":
            leaf("JavaScript", [("JS", action["JS"]?.textValue ?? "")])
        case "ResetForm":
            leaf("ResetForm")
        case "SubmitForm":
            leaf("SubmitForm", [("URL", action["F"]?.dictionaryValue?["F"]?.textValue ?? "")])
        case "Hide":
            leaf("Hide", [("Hide", action["H"]?.boolValue == false ? "false" : "true")])
        default: break
        }
        if depth < 16, let next = action["Next"]?.dictionaryValue { writeAction(next, depth: depth + 1) }
        close("Action")
    }

    /// A destination: `<Dest><Fit Page="N"/></Dest>` for a page, `<Dest><Named Name="…"/></Dest>`
    /// for a named destination.
    private mutating func writeDestination(_ destination: PDFObject?) {
        switch destination {
        case .array(let array)?:
            guard let target = array.first else { return }
            let page = target.referenceValue.flatMap { pageIndexes[$0] } ?? target.intValue ?? 0
            open("Dest")
            leaf("Fit", [("Page", String(page))])
            close("Dest")
        case let destination?:
            guard let name = destination.nameValue ?? destination.textValue else { return }
            open("Dest")
            leaf("Named", [("Name", name)])
            close("Dest")
        case nil: break
        }
    }

    // MARK: - Form field values

    /// A field of the `<fields>` tree: its children by partial name, and its values.
    private final class FieldNode {
        var children: [(name: String, node: FieldNode)] = []
        var values: [String]?

        func child(_ name: String) -> FieldNode {
            if let existing = children.first(where: { $0.name == name }) { return existing.node }
            let node = FieldNode()
            children.append((name, node))
            return node
        }
    }

    /// The values as `<fields>`: one `<field>` per part of each fully qualified name, a `<value>`
    /// per value (none for an empty field).
    private mutating func writeFields(_ values: [FormFieldValue]) {
        guard !values.isEmpty else { return }
        let root = FieldNode()
        for value in values {
            var node = root
            for part in value.name.split(separator: ".", omittingEmptySubsequences: false) {
                node = node.child(String(part))
            }
            switch value.value {
            case .string(let text)?: node.values = [text]
            case .array(let items)?: node.values = items.compactMap(\.stringValue)
            default: node.values = []
            }
        }
        open("fields")
        writeChildren(of: root)
        close("fields")
    }

    private mutating func writeChildren(of node: FieldNode) {
        for (name, child) in node.children {
            open("field", [("name", name)])
            for value in child.values ?? [] { leaf("value", text: value) }
            writeChildren(of: child)
            close("field")
        }
    }

    // MARK: - Output

    private mutating func open(_ name: String, _ attributes: [(String, String)] = []) {
        output += String(repeating: "  ", count: indentation) + "<" + name + Self.attributeText(attributes) + ">\n"
        indentation += 1
    }

    private mutating func close(_ name: String) {
        indentation -= 1
        output += String(repeating: "  ", count: indentation) + "</" + name + ">\n"
    }

    /// An element without children: empty, or with text.
    private mutating func leaf(_ name: String, _ attributes: [(String, String)] = [], text: String? = nil) {
        output += String(repeating: "  ", count: indentation) + "<" + name + Self.attributeText(attributes)
        if let text {
            output += ">" + text.xmlEscaped + "</" + name + ">\n"
        } else {
            output += "/>\n"
        }
    }

    private static func attributeText(_ attributes: [(String, String)]) -> String {
        attributes.map { " \($0.0)=\"\($0.1.xmlEscaped)\"" }.joined()
    }

    /// Base64 bytes as upper-case hexadecimal, as XFDF's `<ids>` writes them.
    static func hex(base64: String) -> String? {
        Data(base64Encoded: base64).map { $0.map { String(format: "%02X", $0) }.joined() }
    }
}
