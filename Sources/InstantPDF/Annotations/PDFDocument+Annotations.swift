import Foundation
import InstantJSON

extension PDFDocument {
    /// The annotations of the PDF as Instant JSON records, page by page.
    ///
    /// Each record's `id` is its object number as a string and its `pdfObjectId` the object number.
    /// Popups are folded into their parent (they are not records); text annotations that reply to
    /// another annotation (`/IRT`) become ``InstantJSON/Comment``s of that thread (see
    /// ``originalRecords()``); subtypes without an Instant JSON type become `pspdfkit/unknown`.
    /// Annotations written directly into `/Annots` (without an object number) have no `pdfObjectId`;
    /// their id is `p<page>a<position in /Annots>`. An annotation object listed on several pages
    /// is one record, on the first page that lists it.
    public func annotations() -> [Annotation] {
        originalRecords().annotations
    }

    /// The originals of the PDF as Instant JSON: annotations, comments (replies), form fields and
    /// their values, and the document's `pdfId`. Read the first time it is asked for, then kept.
    public func originalRecords() -> InstantDocumentJSON {
        cachedOriginalRecords(readOriginalRecords)
    }

    private func readOriginalRecords() -> InstantDocumentJSON {
        var annotations: [Annotation] = []
        var comments: [Comment] = []
        var replies: [(Annotation, parent: Int)] = []
        var seen = Set<Int>()
        for page in pages {
            let space = PageSpace(cropBox: page.cropBox)
            for (position, entry) in (resolve(page.dictionary["Annots"] ?? .null).arrayValue ?? []).enumerated() {
                let number = entry.referenceValue?.number
                if let number, !seen.insert(number).inserted { continue }
                guard let dictionary = resolve(entry).dictionaryValue,
                    var annotation = annotation(dictionary, number: number ?? 0, page: page, space: space)
                else { continue }
                if number == nil {
                    // Written directly into /Annots: no object number, so a positional id.
                    annotation.pdfObjectId = nil
                    annotation.id = "p\(page.index)a\(position)"
                }
                if let parent = replyParent(dictionary) {
                    replies.append((annotation, parent))
                } else {
                    annotations.append(annotation)
                }
            }
        }
        let ids = Set(annotations.compactMap(\.pdfObjectId))
        var roots = Set<Int>()
        for (reply, parent) in replies {
            guard ids.contains(parent) else {
                annotations.append(reply)
                continue
            }
            roots.insert(parent)
            comments.append(Self.comment(replying: reply, to: String(parent)))
        }
        for index in annotations.indices where roots.contains(annotations[index].pdfObjectId ?? -1) {
            annotations[index].isCommentThreadRoot = true
        }
        let form = formRecords()
        var document = InstantDocumentJSON(
            pdfId: pdfId, annotations: annotations, formFields: form.fields, formFieldValues: form.values,
            comments: comments)
        for annotation in annotations where annotation.type == .image {
            guard let number = annotation.pdfObjectId,
                let dictionary = resolve(.reference(PDFReference(number: number, generation: 0))).dictionaryValue,
                let image = imageAttachment(of: dictionary)
            else { continue }
            document.attachments[image.key] = image
        }
        return document
    }

    /// A text annotation that replies to the annotation with id `rootId` (`/IRT` in a PDF,
    /// `inreplyto` in XFDF), as a comment of its thread.
    static func comment(replying reply: Annotation, to rootId: String) -> Comment {
        var comment = Comment(
            rootId: rootId, pageIndex: reply.pageIndex, text: AnnotationText(value: reply.text?.value ?? ""),
            id: reply.id)
        comment.pdfObjectId = reply.pdfObjectId
        comment.creatorName = reply.creatorName
        comment.createdAt = reply.createdAt
        comment.updatedAt = reply.updatedAt
        return comment
    }

    /// The annotation a text annotation replies to (`/IRT`, not a group), by object number.
    private func replyParent(_ dictionary: PDFDictionary) -> Int? {
        guard let parent = dictionary["IRT"]?.referenceValue, dictionary["Subtype"]?.nameValue == "Text",
            dictionary["RT"]?.nameValue != "Group"
        else { return nil }
        return parent.number
    }

    /// The page that first lists each annotation object in its `/Annots`, with the object's
    /// reference, by object number. Reads only the `/Annots` arrays, not the annotations.
    func annotationPlacements() -> [Int: (pageIndex: Int, reference: PDFReference)] {
        var placements: [Int: (pageIndex: Int, reference: PDFReference)] = [:]
        for page in pages {
            for entry in resolve(page.dictionary["Annots"] ?? .null).arrayValue ?? [] {
                guard let reference = entry.referenceValue, placements[reference.number] == nil else { continue }
                placements[reference.number] = (page.index, reference)
            }
        }
        return placements
    }

    /// One original read on its own, as ``originalRecords()`` reads it: an annotation, or a comment
    /// when it replies to an annotation; neither for popups and objects that are not annotations.
    func originalRecord(
        _ number: Int, placements: [Int: (pageIndex: Int, reference: PDFReference)]
    ) -> (annotation: Annotation?, comment: Comment?) {
        func read(_ number: Int) -> (Annotation, PDFDictionary)? {
            guard let placement = placements[number],
                let dictionary = resolve(.reference(placement.reference)).dictionaryValue
            else { return nil }
            let page = pages[placement.pageIndex]
            return annotation(dictionary, number: number, page: page, space: PageSpace(cropBox: page.cropBox))
                .map { ($0, dictionary) }
        }
        guard let (record, dictionary) = read(number) else { return (nil, nil) }
        if let parent = replyParent(dictionary), let (_, parentDictionary) = read(parent),
            replyParent(parentDictionary) == nil
        {
            return (nil, Self.comment(replying: record, to: String(parent)))
        }
        return (record, nil)
    }

    func annotation(_ dictionary: PDFDictionary, number: Int, page: PDFPage, space: PageSpace) -> Annotation? {
        let subtype = dictionary["Subtype"]?.nameValue ?? ""
        if subtype == "Popup" { return nil }
        guard let rect = PDFRect(dictionary["Rect"] ?? .null, resolve: resolve) else { return nil }
        // ISO 32000-2 gives stamps an intent; image stamps become image annotations.
        let isImage = subtype == "Stamp" && dictionary["IT"]?.nameValue == "StampImage"
        let type = isImage ? .image : Self.instantType(subtype: subtype)
        var annotation = Annotation(type: type, pageIndex: page.index, bbox: space.rect(rect), id: String(number))
        annotation.pdfObjectId = number
        func text(_ key: String) -> String? { resolve(dictionary[key] ?? .null).textValue }
        func numbers(_ key: String) -> [Double] {
            resolve(dictionary[key] ?? .null).arrayValue?.compactMap { resolve($0).doubleValue } ?? []
        }
        if let opacity = resolve(dictionary["CA"] ?? .null).doubleValue { annotation.opacity = min(max(opacity, 0), 1) }
        if let name = text("NM") { annotation.name = name }
        if let author = text("T"), subtype != "Widget" { annotation.creatorName = author }
        if let created = PDFValues.date(text("CreationDate")) { annotation.createdAt = created }
        if let modified = PDFValues.date(text("M")) { annotation.updatedAt = modified }
        if let flags = resolve(dictionary["F"] ?? .null).intValue {
            let list = PDFValues.flags(flags)
            if !list.isEmpty { annotation.flags = list }
        }
        let contents = text("Contents")
        let color = PDFValues.color(dictionary["C"], resolve: resolve)
        let interiorColor = PDFValues.color(dictionary["IC"], resolve: resolve)
        let border = borderStyle(dictionary)
        switch type {
        case .note:
            annotation.text = AnnotationText(value: contents ?? "")
            annotation.icon = Self.noteIcon(dictionary["Name"]?.nameValue)
            annotation.color = color
        case .text:
            annotation.text = AnnotationText(value: contents ?? "")
            let appearance = PDFValues.defaultAppearance(text("DA"))
            annotation.fontSize = appearance.fontSize.map { $0 > 0 ? $0 : 12 } ?? 12
            annotation.fontColor = appearance.color
            annotation.horizontalAlign =
                ["left", "center", "right"][min(max(resolve(dictionary["Q"] ?? .null).intValue ?? 0, 0), 2)]
            if let callout = callout(dictionary, space: space) { annotation["callout"] = callout }
            if let color, dictionary["C"] != nil { annotation.backgroundColor = color }
        case .highlight, .squiggly, .strikeOut, .underline:
            let quads = numbers("QuadPoints")
            annotation.rects = quads.count >= 8 ? space.rects(quadPoints: quads) : [annotation.bbox]
            annotation.color = color ?? RGBColor(red: 255, green: 255, blue: 0)
            annotation.note = contents
            if type == .highlight { annotation.blendMode = .multiply }
        case .redaction:
            let quads = numbers("QuadPoints")
            if quads.count >= 8 { annotation.rects = space.rects(quadPoints: quads) }
            annotation.fillColor = interiorColor
            annotation.json["outlineColor"] = PDFValues.color(dictionary["OC"], resolve: resolve).map {
                .string($0.hex)
            }
            annotation.json["overlayText"] = text("OverlayText").map(JSONValue.string)
            annotation.note = contents
        case .ink:
            let strokes = resolve(dictionary["InkList"] ?? .null).arrayValue?.map { stroke in
                space.points(resolve(stroke).arrayValue?.compactMap { resolve($0).doubleValue } ?? [])
            }
            annotation.lines = InkLines(points: strokes ?? [])
            annotation.lineWidth = border.width ?? 1
            annotation.strokeColor = color
            annotation.note = contents
        case .line:
            let line = numbers("L")
            if line.count == 4 {
                annotation.startPoint = space.point(line[0], line[1])
                annotation.endPoint = space.point(line[2], line[3])
            } else {
                let box = annotation.bbox
                annotation.startPoint = Point(x: box.left, y: box.top)
                annotation.endPoint = Point(x: box.left + box.width, y: box.top + box.height)
            }
            let ends = resolve(dictionary["LE"] ?? .null).arrayValue?.map { resolve($0).nameValue } ?? []
            if ends.count == 2, ends.contains(where: { PDFValues.lineCap($0) != nil }) {
                annotation.lineCaps = (PDFValues.lineCap(ends[0]), PDFValues.lineCap(ends[1]))
            }
            applyShape(&annotation, color: color, fill: interiorColor, border: border, note: contents)
        case .polygon, .polyline:
            annotation.points = space.points(numbers("Vertices"))
            let ends = resolve(dictionary["LE"] ?? .null).arrayValue?.map { resolve($0).nameValue } ?? []
            if type == .polyline, ends.count == 2, ends.contains(where: { PDFValues.lineCap($0) != nil }) {
                annotation.lineCaps = (PDFValues.lineCap(ends[0]), PDFValues.lineCap(ends[1]))
            }
            applyShape(&annotation, color: color, fill: interiorColor, border: border, note: contents)
        case .rectangle, .ellipse:
            applyShape(&annotation, color: color, fill: interiorColor, border: border, note: contents)
        case .stamp:
            let name = dictionary["Name"]?.nameValue ?? "Draft"
            if let standard = Self.standardStamp(name) {
                annotation.stampType = standard
            } else {
                annotation.stampType = .custom
                annotation.title = name
            }
            annotation.color = color
            annotation.note = contents
        case .image:
            if let image = imageAttachment(of: dictionary) {
                annotation.imageAttachmentId = image.key
                annotation.contentType = image.contentType
            }
            annotation.note = contents
        case .link:
            if let action = action(dictionary["A"]) ?? destinationAction(dictionary["Dest"]) {
                annotation.action = action
            }
            annotation.json["borderColor"] = color.map { .string($0.hex) }
            annotation.json["borderWidth"] = border.width.map(JSONValue.number)
        case .widget:
            annotation.formFieldName = fieldName(of: dictionary)
            let characteristics = resolve(dictionary["MK"] ?? .null).dictionaryValue
            annotation.json["borderColor"] = PDFValues.color(characteristics?["BC"], resolve: resolve).map {
                .string($0.hex)
            }
            annotation.backgroundColor = PDFValues.color(characteristics?["BG"], resolve: resolve)
            let appearance = PDFValues.defaultAppearance(inheritedText(dictionary, "DA"))
            if let size = appearance.fontSize { annotation["fontSize"] = size > 0 ? .number(size) : "auto" }
            annotation.fontColor = appearance.color
            if let action = action(dictionary["A"]) { annotation.action = action }
        default:
            annotation.note = contents
            annotation.customData = ["pdfSubtype": .string(subtype)]
        }
        return annotation
    }

    /// The JPEG of an image stamp's appearance (an image XObject with `/DCTDecode`), which is the
    /// attachment the writer embedded; other images cannot be given back as a file.
    func imageAttachment(of dictionary: PDFDictionary) -> Attachment? {
        guard let normal = resolve(dictionary["AP"] ?? .null).dictionaryValue?["N"],
            let form = resolve(normal).dictionaryValue,
            let xObjects = resolve(resolve(form["Resources"] ?? .null).dictionaryValue?["XObject"] ?? .null)
                .dictionaryValue
        else { return nil }
        for key in xObjects.entries.keys.sorted() {
            guard case .stream(let image) = resolve(xObjects[key] ?? .null),
                image.dictionary["Subtype"]?.nameValue == "Image",
                resolve(image.dictionary["Filter"] ?? .null).nameValue == "DCTDecode"
            else { continue }
            return Attachment(data: image.rawData, contentType: "image/jpeg")
        }
        return nil
    }

    static func instantType(subtype: String) -> AnnotationType {
        switch subtype {
        case "Text": return .note
        case "FreeText": return .text
        case "Line": return .line
        case "Square": return .rectangle
        case "Circle": return .ellipse
        case "Polygon": return .polygon
        case "PolyLine": return .polyline
        case "Highlight": return .highlight
        case "Underline": return .underline
        case "Squiggly": return .squiggly
        case "StrikeOut": return .strikeOut
        case "Ink": return .ink
        case "Stamp": return .stamp
        case "Link": return .link
        case "Redact": return .redaction
        case "Widget": return .widget
        default: return .unknown
        }
    }

    static func noteIcon(_ name: String?) -> String {
        switch name {
        case "Comment": return "comment"
        case "Key": return "key"
        case "Note": return "note"
        case "Help": return "help"
        case "NewParagraph": return "newParagraph"
        case "Paragraph": return "paragraph"
        case "Insert": return "insert"
        case "Check": return "check"
        case "Circle": return "circle"
        case "Cross": return "cross"
        case "Star": return "star"
        case "RightArrow": return "rightArrow"
        case "RightPointer": return "rightPointer"
        default: return "comment"
        }
    }

    /// Standard stamp names of ISO 32000-1 (12.5.6.12) and the common `SB…` variants of other writers.
    static func standardStamp(_ name: String) -> StampType? {
        let bare = name.hasPrefix("SB") ? String(name.dropFirst(2)) : name
        return StampType.standard.first { $0.rawValue.caseInsensitiveCompare(bare) == .orderedSame }
    }

    func borderStyle(_ dictionary: PDFDictionary) -> (width: Double?, dashes: [Double]?) {
        if let style = resolve(dictionary["BS"] ?? .null).dictionaryValue {
            let width = resolve(style["W"] ?? .null).doubleValue ?? 1
            let dashes =
                style["S"]?.nameValue == "D"
                ? (resolve(style["D"] ?? .null).arrayValue?.compactMap { resolve($0).doubleValue } ?? [3]) : nil
            return (width, dashes)
        }
        if let border = resolve(dictionary["Border"] ?? .null).arrayValue, border.count >= 3 {
            let dashes = border.count >= 4 ? resolve(border[3]).arrayValue?.compactMap { resolve($0).doubleValue } : nil
            return (resolve(border[2]).doubleValue, dashes)
        }
        return (nil, nil)
    }

    func applyShape(
        _ annotation: inout Annotation, color: RGBColor?, fill: RGBColor?, border: (width: Double?, dashes: [Double]?),
        note: String?
    ) {
        annotation.strokeColor = color
        annotation.fillColor = fill
        annotation.strokeWidth = border.width ?? 1
        if let dashes = border.dashes, !dashes.isEmpty { annotation.strokeDashArray = dashes.map { max($0, 0) } }
        annotation.note = note
    }

    func callout(_ dictionary: PDFDictionary, space: PageSpace) -> JSONValue? {
        let line = resolve(dictionary["CL"] ?? .null).arrayValue?.compactMap { resolve($0).doubleValue } ?? []
        guard line.count == 4 || line.count == 6 else { return nil }
        let points = space.points(line)
        var callout: JSONObject = [
            "start": points[0].json, "end": points[points.count - 1].json, "innerRectInset": [0, 0, 0, 0],
        ]
        if points.count == 3 { callout["knee"] = points[1].json }
        let insets = resolve(dictionary["RD"] ?? .null).arrayValue?.compactMap { resolve($0).doubleValue } ?? []
        if insets.count == 4 { callout["innerRectInset"] = .array(insets.map(JSONValue.number)) }
        if let cap = PDFValues.lineCap(dictionary["LE"]?.nameValue) { callout["cap"] = .string(cap.rawValue) }
        return .object(callout)
    }

    /// An action dictionary as Instant JSON (following `/Next` as `subAction`).
    func action(_ object: PDFObject?, depth: Int = 0) -> Action? {
        guard depth < 16, let object, let dictionary = resolve(object).dictionaryValue else { return nil }
        var action: Action?
        func text(_ key: String) -> String? { resolve(dictionary[key] ?? .null).textValue }
        switch dictionary["S"]?.nameValue {
        case "URI":
            action = Action.uri(
                resolve(dictionary["URI"] ?? .null).stringData.map { String(decoding: $0, as: UTF8.self) } ?? "")
        case "GoTo":
            action = destinationAction(dictionary["D"])
        case "GoToR":
            var remote = Action(.goToRemote, ["relativePath": .string(fileSpecification(dictionary["F"]) ?? "")])
            if let name = resolve(dictionary["D"] ?? .null).nameValue ?? text("D") { remote.namedDestination = name }
            action = remote
        case "GoToE":
            action = Action(.goToEmbedded, ["relativePath": .string(fileSpecification(dictionary["F"]) ?? "")])
        case "Launch":
            action = Action(.launch, ["filePath": .string(fileSpecification(dictionary["F"]) ?? "")])
        case "Named":
            let name = dictionary["N"]?.nameValue ?? ""
            action = Action(.named, ["action": .string(name.prefix(1).lowercased() + name.dropFirst())])
        case "JavaScript":
            let script: String?
            if case .stream(let stream) = resolve(dictionary["JS"] ?? .null) {
                script = (try? decodedData(of: stream)).map(PDFText.decode)
            } else {
                script = text("JS")
            }
            action = Action(.javaScript, ["script": .string(script ?? "")])
        case "ResetForm":
            action = Action(.resetForm)
        case "SubmitForm":
            action = Action(.submitForm, ["uri": .string(fileSpecification(dictionary["F"]) ?? ""), "flags": []])
        case "Hide":
            action = Action(
                .hide,
                ["hide": .bool(resolve(dictionary["H"] ?? .bool(true)).boolValue ?? true), "annotationReferences": []])
        default:
            return nil
        }
        if var result = action, let next = self.action(dictionary["Next"], depth: depth + 1) {
            result.subAction = next
            action = result
        }
        return action
    }

    /// A destination (explicit array or name) as a `goTo` action.
    func destinationAction(_ object: PDFObject?) -> Action? {
        guard let object else { return nil }
        var destination = resolve(object)
        if destination.nameValue != nil || destination.stringData != nil {
            destination = namedDestination(destination)
        }
        if let dictionary = destination.dictionaryValue { destination = resolve(dictionary["D"] ?? .null) }
        guard let array = destination.arrayValue, let target = array.first else { return nil }
        if let reference = target.referenceValue, let page = pages.first(where: { $0.reference == reference }) {
            return .goTo(pageIndex: page.index)
        }
        if let index = target.intValue, index >= 0, index < pageCount { return .goTo(pageIndex: index) }
        return nil
    }

    private func namedDestination(_ name: PDFObject) -> PDFObject {
        let catalog = self.catalog
        if let key = name.nameValue, let dests = resolve(catalog["Dests"] ?? .null).dictionaryValue {
            return resolve(dests[key] ?? .null)
        }
        guard let key = name.stringData,
            let names = resolve(catalog["Names"] ?? .null).dictionaryValue,
            let tree = resolve(names["Dests"] ?? .null).dictionaryValue
        else { return .null }
        return lookUp(key, in: tree, depth: 0)
    }

    private func lookUp(_ key: Data, in node: PDFDictionary, depth: Int) -> PDFObject {
        guard depth < 32 else { return .null }
        if let names = resolve(node["Names"] ?? .null).arrayValue {
            for index in stride(from: 0, to: names.count - 1, by: 2) where resolve(names[index]).stringData == key {
                return resolve(names[index + 1])
            }
        }
        for kid in resolve(node["Kids"] ?? .null).arrayValue ?? [] {
            if let child = resolve(kid).dictionaryValue {
                let found = lookUp(key, in: child, depth: depth + 1)
                if found != .null { return found }
            }
        }
        return .null
    }

    func fileSpecification(_ object: PDFObject?) -> String? {
        guard let object else { return nil }
        let value = resolve(object)
        if let text = value.textValue { return text }
        guard let dictionary = value.dictionaryValue else { return nil }
        for key in ["UF", "F", "Unix", "DOS"] {
            if let text = resolve(dictionary[key] ?? .null).textValue { return text }
        }
        return nil
    }

    /// The fully qualified name of the field of a widget: the `/T` of the field and its parents.
    func fieldName(of dictionary: PDFDictionary) -> String? {
        var parts: [String] = []
        var node: PDFDictionary? = dictionary
        var depth = 0
        while let current = node, depth < 64 {
            if let part = resolve(current["T"] ?? .null).textValue { parts.append(part) }
            node = current["Parent"].flatMap { resolve($0).dictionaryValue }
            depth += 1
        }
        return parts.isEmpty ? nil : parts.reversed().joined(separator: ".")
    }

    /// A field attribute, inherited from the field's parents.
    func inheritedText(_ dictionary: PDFDictionary, _ key: String) -> String? {
        inherited(dictionary, key).flatMap { resolve($0).textValue }
    }

    func inherited(_ dictionary: PDFDictionary, _ key: String) -> PDFObject? {
        var node: PDFDictionary? = dictionary
        var depth = 0
        while let current = node, depth < 64 {
            if let value = current[key] { return value }
            node = current["Parent"].flatMap { resolve($0).dictionaryValue }
            depth += 1
        }
        return nil
    }
}
