/// A rectangle in PDF user space: lower-left and upper-right corners, y up.
public struct PDFRect: Hashable, Sendable {
    public var minX: Double
    public var minY: Double
    public var maxX: Double
    public var maxY: Double

    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = min(minX, maxX)
        self.minY = min(minY, maxY)
        self.maxX = max(minX, maxX)
        self.maxY = max(minY, maxY)
    }

    /// A rectangle from a PDF array `[x1 y1 x2 y2]` (corners in any order); `nil` otherwise.
    init?(_ object: PDFObject, resolve: (PDFObject) -> PDFObject) {
        guard let values = resolve(object).arrayValue?.compactMap({ resolve($0).doubleValue }), values.count == 4,
            values.allSatisfy(\.isFinite)
        else { return nil }
        self.init(minX: values[0], minY: values[1], maxX: values[2], maxY: values[3])
    }

    public var width: Double { maxX - minX }
    public var height: Double { maxY - minY }
}

/// A page: its boxes and rotation (inherited through the page tree) and its dictionary.
public struct PDFPage: Sendable {
    /// The page's position, from 0.
    public var index: Int
    /// The page object.
    public var reference: PDFReference?
    public var dictionary: PDFDictionary
    public var mediaBox: PDFRect
    /// The visible area; the media box when the page has none.
    public var cropBox: PDFRect
    /// Clockwise rotation in degrees: 0, 90, 180 or 270.
    public var rotation: Int

    /// The most page-tree nodes visited, bounding files whose tree repeats nodes many times.
    static let maximumNodeVisits = 200_000

    /// Walks the page tree from the catalog, with inherited attributes, guarding against cycles.
    ///
    /// A page listed twice in `/Kids` counts twice, as qpdf and PDFium count it; a node that is its
    /// own ancestor is skipped with a warning.
    static func collect(in reader: PDFDocumentReader, catalog: PDFDictionary, warnings: inout [String]) -> [PDFPage] {
        var pages: [PDFPage] = []
        var ancestors = Set<Int>()
        var visits = 0
        let letter = PDFRect(minX: 0, minY: 0, maxX: 612, maxY: 792)

        func visit(_ object: PDFObject, inherited: PDFDictionary, depth: Int) {
            visits += 1
            guard depth < 64, visits <= maximumNodeVisits else { return }
            var reference: PDFReference?
            if case .reference(let ref) = object {
                guard !ancestors.contains(ref.number) else {
                    warnings.append("the page tree contains itself through object \(ref.number); the loop was cut")
                    return
                }
                reference = ref
            }
            guard let node = reader.resolve(object).dictionaryValue else { return }
            var attributes = inherited
            for key in ["MediaBox", "CropBox", "Rotate", "Resources"] where node[key] != nil {
                attributes[key] = node[key]
            }
            let kids = reader.resolve(node["Kids"] ?? .null).arrayValue
            if node.type == "Pages" || (node.type == nil && kids != nil) {
                if let number = reference?.number { ancestors.insert(number) }
                for kid in kids ?? [] { visit(kid, inherited: attributes, depth: depth + 1) }
                if let number = reference?.number { ancestors.remove(number) }
                return
            }
            let resolve = reader.resolve
            let mediaBox = attributes["MediaBox"].flatMap { PDFRect($0, resolve: resolve) } ?? letter
            var cropBox = attributes["CropBox"].flatMap { PDFRect($0, resolve: resolve) } ?? mediaBox
            // The crop box is clipped to the media box.
            cropBox = PDFRect(
                minX: max(cropBox.minX, mediaBox.minX), minY: max(cropBox.minY, mediaBox.minY),
                maxX: min(cropBox.maxX, mediaBox.maxX), maxY: min(cropBox.maxY, mediaBox.maxY))
            if cropBox.width <= 0 || cropBox.height <= 0 { cropBox = mediaBox }
            let rawRotation = reader.resolve(attributes["Rotate"] ?? .null).intValue ?? 0
            let rotation = ((rawRotation % 360) + 360) % 360 / 90 * 90
            var dictionary = node
            for (key, value) in attributes.entries where dictionary[key] == nil { dictionary[key] = value }
            pages.append(
                PDFPage(
                    index: pages.count, reference: reference, dictionary: dictionary, mediaBox: mediaBox,
                    cropBox: cropBox, rotation: rotation))
        }

        visit(catalog["Pages"] ?? .null, inherited: PDFDictionary(), depth: 0)
        guard pages.isEmpty else { return pages }

        // A tree that yields no page: the page objects of the file, in object order, as readers
        // that rebuild a damaged file find them.
        for number in reader.table.entries.keys.sorted() where visits < maximumNodeVisits {
            let reference = PDFReference(number: number, generation: 0)
            guard reader.object(reference).dictionaryValue?.type == "Page" else { continue }
            visit(.reference(reference), inherited: inheritedAttributes(of: reference, in: reader), depth: 1)
        }
        if !pages.isEmpty {
            warnings.append(
                "the page tree lists no page; the \(pages.count) page objects of the file were used, in object order")
            return pages
        }
        // No page object at all, but the tree's root counts pages: that many empty pages, as other
        // readers show them.
        let root = reader.resolve(catalog["Pages"] ?? .null).dictionaryValue
        if let count = root?["Count"].map(reader.resolve)?.intValue, count > 0 {
            let mediaBox = root?["MediaBox"].flatMap { PDFRect($0, resolve: reader.resolve) } ?? letter
            let shown = min(count, maximumEmptyPages)
            for index in 0..<shown {
                pages.append(
                    PDFPage(
                        index: index, reference: nil,
                        dictionary: PDFDictionary(["Type": .name("Page")]), mediaBox: mediaBox, cropBox: mediaBox,
                        rotation: 0))
            }
            warnings.append(
                "the page tree counts \(count) pages but holds none; \(shown) empty pages stand in for them")
        }
        return pages
    }

    /// The most empty pages that stand in for a page tree that counts pages but holds none.
    static let maximumEmptyPages = 1_000

    /// The attributes a page inherits from its `/Parent` chain (at most 64 levels).
    private static func inheritedAttributes(of reference: PDFReference, in reader: PDFDocumentReader) -> PDFDictionary {
        var chain: [PDFDictionary] = []
        var seen: Set<Int> = [reference.number]
        var parent = reader.object(reference).dictionaryValue?["Parent"]
        while let next = parent, chain.count < 64 {
            if let number = next.referenceValue?.number {
                guard seen.insert(number).inserted else { break }
            }
            guard let node = reader.resolve(next).dictionaryValue else { break }
            chain.append(node)
            parent = node["Parent"]
        }
        var attributes = PDFDictionary()
        for node in chain.reversed() {
            for key in ["MediaBox", "CropBox", "Rotate", "Resources"] where node[key] != nil {
                attributes[key] = node[key]
            }
        }
        return attributes
    }
}
