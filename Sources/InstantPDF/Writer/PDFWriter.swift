import Foundation
import InstantJSON

/// Brings a PDF to the state of a set of records: works out which annotations, comments and form
/// values differ from the PDF's originals and puts only those into an ``IncrementalUpdate``.
struct PDFWriter {
    let document: PDFDocument
    let options: PDFExportOptions
    let attachments: [String: Data]
    private var update: IncrementalUpdate
    /// The `/Annots` arrays of the pages this update changes.
    private var annots: [Int: [PDFObject]] = [:]
    /// The reference of every record written or kept, by record id (for `/IRT` and `/Parent`).
    private var references: [String: PDFReference] = [:]
    /// The page objects, by page index: the file's, or those this update writes for the empty
    /// pages that stand in for a page tree that counts pages but holds none.
    private var pageReferences: [PDFReference?]
    /// The appearance and rectangle of every annotation to draw into page content, by page.
    private var flattened: [Int: [(appearance: PDFObject, rect: PDFRect)]] = [:]
    private var originals: WriterOriginals
    /// The originals this update deletes.
    private var freed: Set<Int> = []

    /// A writer that brings the PDF to a complete state (every original is read and compared).
    init(document: PDFDocument, options: PDFExportOptions, attachments: [String: Data]) {
        self.init(
            document: document, options: options, attachments: attachments, originals: .init(everyOriginalOf: document))
    }

    private init(
        document: PDFDocument, options: PDFExportOptions, attachments: [String: Data], originals: WriterOriginals
    ) {
        self.document = document
        self.options = options
        self.attachments = attachments
        self.originals = originals
        update = IncrementalUpdate(document: document)
        pageReferences = document.pages.map(\.reference)
    }

    /// A writer that applies an Instant JSON document to the PDF with the default options: only
    /// the originals that the document names are read.
    init(applyingTo document: PDFDocument, attachments: [String: Data]) {
        self.init(
            document: document, options: PDFExportOptions(), attachments: attachments,
            originals: .init(readingOnDemand: document))
    }

    /// The bytes to append to the file for `records`.
    mutating func write(_ records: InstantDocumentJSON) throws(PDFError) -> [UInt8] {
        let annotations = records.annotations.filter { options.includeAnnotations || $0.type == .widget }
        // Flattened threads have no annotation left to reply to.
        let comments = options.includeAnnotations && options.includeComments && !options.flatten ? records.comments : []
        for annotation in annotations where annotation.pageIndex < 0 || annotation.pageIndex >= document.pageCount {
            throw PDFError(
                .unwritableRecord,
                "annotation '\(annotation.id ?? "")' is on page \(annotation.pageIndex), but the PDF has "
                    + "\(document.pageCount) pages (indexes 0 to \(document.pageCount - 1))")
        }
        if originals.isComplete {
            try removeOriginals(keeping: annotations, comments)
        } else {
            try removeOriginals(skipped: records.skippedPdfObjectIds, replacedBy: annotations, comments)
        }
        if !annotations.isEmpty || !comments.isEmpty { try writeMissingPages() }
        for annotation in annotations where annotation.type != .widget { try write(annotation) }
        for comment in comments { try write(comment, annotations: annotations) }
        try writeFormValues(records.formFieldValues)
        try flattenPages()
        try writePageAnnots()
        return update.isEmpty ? [] : update.bytes()
    }

    // MARK: - Annotations

    /// Deletes the originals that are not among the records (widgets stay: they belong to fields).
    private mutating func removeOriginals(keeping annotations: [Annotation], _ comments: [Comment]) throws(PDFError) {
        let kept = Set(annotations.compactMap(\.pdfObjectId) + comments.compactMap(\.pdfObjectId))
        let every = originals.everyOriginal()
        let removed =
            every.annotations.filter { $0.value.type != .widget }.map { ($0.key, $0.value.pageIndex) }
            + every.comments.map { ($0.key, $0.value.pageIndex) }
        for (number, pageIndex) in removed where !kept.contains(number) {
            try remove(number, from: pageIndex, free: true)
        }
        let keptIDs = Set(annotations.filter { $0.pdfObjectId == nil }.compactMap(\.id))
        for (id, original) in originals.everyDirectOriginal()
        where !keptIDs.contains(id) && original.annotation.type != .widget {
            var list = try pageAnnots(original.annotation.pageIndex)
            if let index = list.firstIndex(of: original.entry) { list.remove(at: index) }
            annots[original.annotation.pageIndex] = list
        }
    }

    /// Deletes the originals an Instant JSON document skips without replacing them, and the
    /// originals whose id a new record takes (widgets stay: they belong to fields).
    private mutating func removeOriginals(
        skipped: [Int], replacedBy annotations: [Annotation], _ comments: [Comment]
    ) throws(PDFError) {
        let replaced = Set(annotations.compactMap(\.pdfObjectId) + comments.compactMap(\.pdfObjectId))
        for number in Set(skipped) where !replaced.contains(number) {
            if let original = originals.annotation(number), original.type != .widget {
                try remove(number, from: original.pageIndex, free: true)
            } else if let original = originals.comment(number) {
                try remove(number, from: original.pageIndex, free: true)
            }
        }
        let takenIDs = annotations.filter { $0.pdfObjectId == nil }.compactMap { $0.id.flatMap(Int.init) }
        for number in Set(takenIDs).subtracting(skipped) where !replaced.contains(number) {
            if let original = originals.annotation(number), original.type != .widget {
                try remove(number, from: original.pageIndex, free: true)
            }
        }
    }

    /// Takes an annotation (and its popup) off a page and, with `free`, frees its objects.
    private mutating func remove(_ number: Int, from pageIndex: Int, free: Bool) throws(PDFError) {
        let reference = reference(number)
        let popup = document.resolve(update.current(reference)).dictionaryValue?["Popup"]?.referenceValue
        var list = try pageAnnots(pageIndex)
        // Direct dictionaries in /Annots have no reference: only the annotation's own entry and
        // its popup's (when it has one) go.
        list.removeAll { entry in
            guard let entry = entry.referenceValue else { return false }
            return entry.number == number || entry == popup
        }
        annots[pageIndex] = list
        if free {
            freed.insert(number)
            try update.free(reference)
            if let popup { try update.free(popup) }
        }
    }

    private mutating func write(_ annotation: Annotation) throws(PDFError) {
        let page = document.pages[annotation.pageIndex]
        let space = PageSpace(cropBox: page.cropBox)
        let encoder = AnnotationEncoder(
            space: space, page: pageReferences[annotation.pageIndex], pageReferences: pageReferences)
        let original = annotation.pdfObjectId.flatMap { originals.annotation($0) }
        let id = annotation.id ?? annotation.pdfObjectId.map(String.init) ?? ""
        let direct = annotation.pdfObjectId == nil ? originals.directOriginal(id) : nil
        if let direct, direct.annotation.json == annotation.json {
            // An unchanged original without an object number: it stays in /Annots as it is.
            if options.flatten, let dictionary = direct.entry.dictionaryValue,
                let rect = PDFRect(dictionary["Rect"] ?? .null, resolve: document.resolve),
                let appearance = try existingOrNewAppearance(
                    of: dictionary, annotation, space: space, rect: rect, encoder: encoder)
            {
                flattened[annotation.pageIndex, default: []].append((appearance, rect))
                var list = try pageAnnots(annotation.pageIndex)
                if let index = list.firstIndex(of: direct.entry) { list.remove(at: index) }
                annots[annotation.pageIndex] = list
            }
            return
        }
        if let number = annotation.pdfObjectId, let original, original.json == annotation.json {
            // Unchanged: the original object stays as it is.
            let reference = reference(number)
            references[id] = reference
            if options.flatten, let dictionary = document.resolve(.reference(reference)).dictionaryValue,
                let rect = PDFRect(dictionary["Rect"] ?? .null, resolve: document.resolve),
                let appearance = try existingOrNewAppearance(
                    of: dictionary, annotation, space: space, rect: rect, encoder: encoder)
            {
                try flatten(number, appearance: appearance, rect: rect, page: annotation.pageIndex)
            }
            return
        }
        // An unknown subtype is only known well enough to change an original, not to create one.
        if annotation.type == .unknown, original == nil, direct == nil { return }
        guard var dictionary = encoder.dictionary(for: annotation) else { return }
        let rect = PDFRect(dictionary["Rect"] ?? .null, resolve: { $0 }) ?? space.userRect(annotation.bbox)
        let appearance = try appearanceForm(annotation, space: space, rect: rect, encoder: encoder)
        if let appearance { dictionary["AP"] = .dictionary(PDFDictionary(["N": appearance])) }
        let reference: PDFReference
        if let number = annotation.pdfObjectId, let original {
            // Changed: the original's other keys (/P, /Popup, /StructParent, …) are kept.
            reference = self.reference(number)
            var merged = document.resolve(.reference(reference)).dictionaryValue ?? PDFDictionary()
            for key in Self.encodedKeys where appearance != nil || key != "AP" { merged[key] = nil }
            for (key, value) in dictionary.entries { merged[key] = value }
            if original.pageIndex != annotation.pageIndex {
                try remove(number, from: original.pageIndex, free: false)
                merged["Popup"] = nil
                annots[annotation.pageIndex] = try pageAnnots(annotation.pageIndex) + [.reference(reference)]
            }
            try update.replace(reference, with: .dictionary(merged))
        } else if let direct, direct.annotation.pageIndex == annotation.pageIndex {
            // A changed original without an object number becomes an object in its place.
            var merged = direct.entry.dictionaryValue ?? PDFDictionary()
            for key in Self.encodedKeys where appearance != nil || key != "AP" { merged[key] = nil }
            for (key, value) in dictionary.entries { merged[key] = value }
            reference = update.add(.dictionary(merged))
            var list = try pageAnnots(annotation.pageIndex)
            if let index = list.firstIndex(of: direct.entry) {
                list[index] = .reference(reference)
            } else {
                list.append(.reference(reference))
            }
            annots[annotation.pageIndex] = list
        } else {
            if let direct {
                // Moved to another page.
                var list = try pageAnnots(direct.annotation.pageIndex)
                if let index = list.firstIndex(of: direct.entry) { list.remove(at: index) }
                annots[direct.annotation.pageIndex] = list
            }
            reference = update.add(.dictionary(dictionary))
            annots[annotation.pageIndex] = try pageAnnots(annotation.pageIndex) + [.reference(reference)]
        }
        references[id] = reference
        if options.flatten, let appearance {
            try flatten(reference.number, appearance: appearance, rect: rect, page: annotation.pageIndex)
        }
    }

    /// The original's own normal appearance, or else a new one, for flattening an original.
    private mutating func existingOrNewAppearance(
        of dictionary: PDFDictionary, _ annotation: Annotation, space: PageSpace, rect: PDFRect,
        encoder: AnnotationEncoder
    ) throws(PDFError) -> PDFObject? {
        if let normal = Self.normalAppearance(of: dictionary, in: document) { return normal }
        return try appearanceForm(annotation, space: space, rect: rect, encoder: encoder)
    }

    /// A new appearance stream (a form XObject) for an annotation, as a reference to it.
    private mutating func appearanceForm(
        _ annotation: Annotation, space: PageSpace, rect: PDFRect, encoder: AnnotationEncoder
    ) throws(PDFError) -> PDFObject? {
        guard
            let built = try AppearanceBuilder.appearance(
                for: annotation, space: space, rect: rect, attachments: attachments, budget: document.reader.budget)
        else { return nil }
        let form = PDFStream(
            dictionary: PDFDictionary([
                "Type": .name("XObject"), "Subtype": .name("Form"), "BBox": encoder.rectangle(built.boundingBox),
                "Resources": .dictionary(built.resources),
            ]),
            rawData: Data(built.content))
        return .reference(update.add(.stream(form)))
    }

    /// The keys the encoder decides; a changed original loses its old values of them.
    private static let encodedKeys = [
        "Rect", "NM", "F", "CA", "T", "CreationDate", "M", "Contents", "Name", "C", "IC", "DA", "Q", "CL", "IT", "RD",
        "LE", "QuadPoints", "OC", "OverlayText", "InkList", "BS", "Border", "L", "Vertices", "A", "Dest", "AP", "AS",
    ]

    // MARK: - Comments

    /// A comment as a reply (`/IRT`) to its thread's root, with a popup.
    private mutating func write(_ comment: Comment, annotations: [Annotation]) throws(PDFError) {
        guard let (root, rootAnnotation) = threadRoot(comment.rootId, annotations: annotations) else {
            return  // a comment of a thread whose root is not written has no place in the PDF
        }
        let pageIndex = rootAnnotation.pageIndex
        if let number = comment.pdfObjectId, let original = originals.comment(number), original.json == comment.json {
            references[comment.id ?? String(number)] = reference(number)
            return
        }
        let page = document.pages[pageIndex]
        let space = PageSpace(cropBox: page.cropBox)
        let box = rootAnnotation.bbox
        let note = AnnotationEncoder.replyNote(for: comment, root: rootAnnotation)
        let encoder = AnnotationEncoder(space: space, page: pageReferences[pageIndex], pageReferences: [])
        guard var dictionary = encoder.dictionary(for: note) else { return }
        dictionary["IRT"] = .reference(root)
        if let number = comment.pdfObjectId, originals.comment(number) != nil {
            let reference = self.reference(number)
            var merged = document.resolve(.reference(reference)).dictionaryValue ?? PDFDictionary()
            for key in ["Contents", "T", "M", "CreationDate", "NM"] { merged[key] = dictionary[key] }
            try update.replace(reference, with: .dictionary(merged))
            return
        }
        let reference = update.add(.dictionary(dictionary))
        let rect = space.userRect(box)
        let popup = PDFDictionary([
            "Type": .name("Annot"), "Subtype": .name("Popup"), "Parent": .reference(reference),
            "Rect": encoder.rectangle(
                PDFRect(minX: rect.maxX, minY: rect.maxY - 120, maxX: rect.maxX + 180, maxY: rect.maxY)),
            "Open": .bool(false), "F": .integer(AnnotationEncoder.flagBits([])),
        ])
        let popupReference = update.add(.dictionary(popup))
        dictionary["Popup"] = .reference(popupReference)
        try update.replace(reference, with: .dictionary(dictionary))
        annots[pageIndex] = try pageAnnots(pageIndex) + [.reference(reference), .reference(popupReference)]
        if let id = comment.id { references[id] = reference }
    }

    /// The reference and record of a thread's root: a record written or kept by this update, or,
    /// when an Instant JSON document is applied, an original it leaves as it is.
    private mutating func threadRoot(
        _ rootId: String, annotations: [Annotation]
    ) -> (PDFReference, Annotation)? {
        if let root = references[rootId],
            let annotation = annotations.first(where: { ($0.id ?? $0.pdfObjectId.map(String.init)) == rootId })
        {
            return (root, annotation)
        }
        guard !originals.isComplete, let number = Int(rootId), !freed.contains(number),
            let original = originals.annotation(number)
        else { return nil }
        return (reference(number), original)
    }

    // MARK: - Form values

    /// Changed values go into their fields (`/V`, and `/AS` of check boxes and radio buttons);
    /// `/NeedAppearances` asks viewers to draw text and choice fields with their new values.
    private mutating func writeFormValues(_ values: [FormFieldValue]) throws(PDFError) {
        guard !values.isEmpty else { return }
        let form = originals.formRecords()
        let fields = Dictionary(form.fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let before = Dictionary(form.values.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var changed = false
        for value in values {
            guard let field = fields[value.name], let number = field.pdfObjectId,
                before[value.name]?.value != value.value || before[value.name]?.optionIndexes != value.optionIndexes
            else { continue }
            let reference = reference(number)
            guard var dictionary = document.resolve(update.current(reference)).dictionaryValue else { continue }
            switch field.kind {
            case .checkBox, .radio:
                let state: String
                switch value.value {
                case .string(let selected)?: state = selected
                case .array(let list)?:
                    state = list.first.flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "Off"
                default: state = "Off"
                }
                dictionary["V"] = .name(state)
                for widget in field.annotationIds.compactMap(Int.init) {
                    if widget == number {
                        dictionary["AS"] = .name(Self.appearanceState(state, of: dictionary, in: document))
                        continue
                    }
                    let widgetReference = self.reference(widget)
                    guard var widgetDictionary = document.resolve(update.current(widgetReference)).dictionaryValue
                    else { continue }
                    widgetDictionary["AS"] = .name(Self.appearanceState(state, of: widgetDictionary, in: document))
                    try update.replace(widgetReference, with: .dictionary(widgetDictionary))
                }
            case .text, .comboBox, .listBox:
                switch value.value {
                case .string(let text)?: dictionary["V"] = .text(text)
                case .array(let list)?:
                    let texts = list.compactMap { if case .string(let text) = $0 { text } else { nil } }
                    dictionary["V"] = texts.count == 1 ? .text(texts[0]) : .array(texts.map(PDFObject.text))
                default: dictionary["V"] = nil
                }
                if let indexes = value.optionIndexes { dictionary["I"] = .array(indexes.map(PDFObject.integer)) }
            default:
                continue
            }
            try update.replace(reference, with: .dictionary(dictionary))
            changed = true
        }
        if changed { try setNeedAppearances() }
    }

    /// The widget's appearance state for a value: the value when the widget has it, else `Off`.
    private static func appearanceState(_ state: String, of widget: PDFDictionary, in document: PDFDocument) -> String {
        let normal = document.resolve(document.resolve(widget["AP"] ?? .null).dictionaryValue?["N"] ?? .null)
        return normal.dictionaryValue?[state] != nil ? state : "Off"
    }

    private mutating func setNeedAppearances() throws(PDFError) {
        guard let root = document.trailer["Root"]?.referenceValue else { return }
        let catalog = document.resolve(update.current(root)).dictionaryValue ?? PDFDictionary()
        if let formReference = catalog["AcroForm"]?.referenceValue {
            var form = document.resolve(update.current(formReference)).dictionaryValue ?? PDFDictionary()
            form["NeedAppearances"] = .bool(true)
            try update.replace(formReference, with: .dictionary(form))
        } else if var form = catalog["AcroForm"]?.dictionaryValue {
            form["NeedAppearances"] = .bool(true)
            var newCatalog = catalog
            newCatalog["AcroForm"] = .dictionary(form)
            try update.replace(root, with: .dictionary(newCatalog))
        }
    }

    // MARK: - Flattening

    private mutating func flatten(_ number: Int, appearance: PDFObject, rect: PDFRect, page: Int) throws(PDFError) {
        flattened[page, default: []].append((appearance, rect))
        try remove(number, from: page, free: false)
    }

    /// The normal appearance of an annotation: `/AP /N`, or its `/AS` state.
    private static func normalAppearance(of dictionary: PDFDictionary, in document: PDFDocument) -> PDFObject? {
        guard let normal = document.resolve(dictionary["AP"] ?? .null).dictionaryValue?["N"] else { return nil }
        if case .stream = document.resolve(normal) { return normal }
        guard let state = dictionary["AS"]?.nameValue,
            let chosen = document.resolve(normal).dictionaryValue?[state]
        else { return nil }
        return chosen
    }

    /// Draws the flattened appearances into their pages: the page's content wrapped in `q … Q`,
    /// then each appearance mapped from its bounding box to its annotation's rectangle (ISO 32000-1,
    /// 12.5.5).
    private mutating func flattenPages() throws(PDFError) {
        for (pageIndex, items) in flattened.sorted(by: { $0.key < $1.key }) {
            let page = document.pages[pageIndex]
            guard let pageReference = pageReferences[pageIndex] else { continue }
            var pageDictionary = document.resolve(update.current(pageReference)).dictionaryValue ?? PDFDictionary()
            var resources =
                document.resolve(pageDictionary["Resources"] ?? page.dictionary["Resources"] ?? .null)
                .dictionaryValue ?? PDFDictionary()
            var xObjects = document.resolve(resources["XObject"] ?? .null).dictionaryValue ?? PDFDictionary()
            var content = Array("Q\n".utf8)
            for (index, item) in items.enumerated() {
                let name = "OIFlat\(index)"
                xObjects[name] = item.appearance
                let form =
                    (item.appearance.referenceValue.map { update.current($0) } ?? item.appearance).dictionaryValue
                    ?? PDFDictionary()
                let matrix = Self.flatteningMatrix(form: form, rect: item.rect, resolve: document.resolve)
                content += Array(
                    "q \(matrix.map(PDFSerializer.number).joined(separator: " ")) cm /\(name) Do Q\n".utf8)
            }
            resources["XObject"] = .dictionary(xObjects)
            pageDictionary["Resources"] = .dictionary(resources)
            let before = update.add(.stream(PDFStream(dictionary: PDFDictionary(), rawData: Data("q\n".utf8))))
            let after = update.add(.stream(PDFStream(dictionary: PDFDictionary(), rawData: Data(content))))
            var contents: [PDFObject] = [.reference(before)]
            switch pageDictionary["Contents"] {
            case .array(let list)?: contents += list
            case .reference(let reference)?:
                if let list = document.resolve(.reference(reference)).arrayValue {
                    contents += list
                } else {
                    contents.append(.reference(reference))
                }
            default: break
            }
            contents.append(.reference(after))
            pageDictionary["Contents"] = .array(contents)
            try update.replace(pageReference, with: .dictionary(pageDictionary))
        }
    }

    /// The matrix that maps a form's bounding box (after its own `/Matrix`) onto `rect`.
    private static func flatteningMatrix(form: PDFDictionary, rect: PDFRect, resolve: (PDFObject) -> PDFObject)
        -> [Double]
    {
        let box = PDFRect(form["BBox"] ?? .null, resolve: resolve) ?? rect
        let values = resolve(form["Matrix"] ?? .null).arrayValue?.compactMap { resolve($0).doubleValue } ?? []
        let m = values.count == 6 ? values : [1, 0, 0, 1, 0, 0]
        let corners = [(box.minX, box.minY), (box.maxX, box.minY), (box.minX, box.maxY), (box.maxX, box.maxY)].map {
            (m[0] * $0.0 + m[2] * $0.1 + m[4], m[1] * $0.0 + m[3] * $0.1 + m[5])
        }
        let minX = corners.map(\.0).min()!
        let maxX = corners.map(\.0).max()!
        let minY = corners.map(\.1).min()!
        let maxY = corners.map(\.1).max()!
        let scaleX = maxX - minX > 0 ? rect.width / (maxX - minX) : 1
        let scaleY = maxY - minY > 0 ? rect.height / (maxY - minY) : 1
        return [scaleX, 0, 0, scaleY, rect.minX - minX * scaleX, rect.minY - minY * scaleY]
    }

    // MARK: - Pages

    /// Writes page objects for the empty pages that stand in for a page tree that counts pages but
    /// holds none, and a page tree root that lists them, so that annotations have a page to be on.
    private mutating func writeMissingPages() throws(PDFError) {
        guard pageReferences.contains(where: { $0 == nil }) else { return }
        let catalogReference = document.trailer["Root"]?.referenceValue
        let rootReference =
            document.catalog["Pages"]?.referenceValue.flatMap { reference in
                document.resolve(.reference(reference)).dictionaryValue != nil ? reference : nil
            } ?? update.add(.dictionary(PDFDictionary(["Type": .name("Pages")])))
        for (index, page) in document.pages.enumerated() where pageReferences[index] == nil {
            let box = [page.mediaBox.minX, page.mediaBox.minY, page.mediaBox.maxX, page.mediaBox.maxY]
            pageReferences[index] = update.add(
                .dictionary(
                    PDFDictionary([
                        "Type": .name("Page"), "Parent": .reference(rootReference),
                        "MediaBox": .array(box.map { .real($0) }), "Resources": .dictionary(PDFDictionary()),
                    ])))
        }
        var root = document.resolve(update.current(rootReference)).dictionaryValue ?? PDFDictionary()
        root["Type"] = .name("Pages")
        root["Kids"] = .array(pageReferences.compactMap { $0.map(PDFObject.reference) })
        root["Count"] = .integer(pageReferences.count)
        try update.replace(rootReference, with: .dictionary(root))
        if document.catalog["Pages"]?.referenceValue != rootReference {
            guard let catalogReference else {
                throw PDFError(
                    .unwritableRecord, "the document catalog is not an indirect object, so no page tree can be added")
            }
            var catalog = document.catalog
            catalog["Pages"] = .reference(rootReference)
            try update.replace(catalogReference, with: .dictionary(catalog))
        }
    }

    /// A page's `/Annots` as this update has them so far.
    private mutating func pageAnnots(_ pageIndex: Int) throws(PDFError) -> [PDFObject] {
        if let list = annots[pageIndex] { return list }
        guard let pageReference = pageReferences[pageIndex] else {
            throw PDFError(
                .unwritableRecord,
                "page \(pageIndex) is not an indirect object, so its annotations cannot be updated incrementally")
        }
        let pageDictionary = document.resolve(update.current(pageReference)).dictionaryValue ?? PDFDictionary()
        let list = document.resolve(pageDictionary["Annots"] ?? .null).arrayValue ?? []
        annots[pageIndex] = list
        return list
    }

    /// Writes the changed `/Annots` arrays: into their own object when the page refers to an array
    /// object, otherwise into the page (also when a damaged page's `/Annots` names another kind of
    /// object, such as the catalog).
    private mutating func writePageAnnots() throws(PDFError) {
        for (pageIndex, list) in annots.sorted(by: { $0.key < $1.key }) {
            guard let pageReference = pageReferences[pageIndex] else { continue }
            var pageDictionary = document.resolve(update.current(pageReference)).dictionaryValue ?? PDFDictionary()
            let original = document.resolve(pageDictionary["Annots"] ?? .null).arrayValue ?? []
            guard original != list else { continue }
            if let arrayReference = pageDictionary["Annots"]?.referenceValue,
                !update.structural.contains(arrayReference.number),
                document.resolve(.reference(arrayReference)).arrayValue != nil
            {
                try update.replace(arrayReference, with: .array(list))
            } else {
                pageDictionary["Annots"] = list.isEmpty ? nil : .array(list)
                try update.replace(pageReference, with: .dictionary(pageDictionary))
            }
        }
    }

    /// The reference of an existing object, with its generation from the cross-reference table.
    private func reference(_ number: Int) -> PDFReference {
        if case .offset(_, let generation)? = document.reader.table.entries[number] {
            return PDFReference(number: number, generation: generation)
        }
        return PDFReference(number: number, generation: 0)
    }
}
