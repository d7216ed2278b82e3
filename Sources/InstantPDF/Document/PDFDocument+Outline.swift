import Foundation
import InstantJSON

/// One item of a PDF's outline (its bookmarks panel): a title, where it goes, and its children.
public struct PDFOutlineItem: Hashable, Sendable {
    public var title: String
    /// The item's action, or its destination as a `goTo` action; `nil` when it has neither or
    /// they cannot be read.
    public var action: Action?
    /// Whether the item shows its children when the document opens (a positive `/Count`).
    public var isExpanded: Bool
    public var isBold: Bool
    public var isItalic: Bool
    /// The color of the title (`/C`), when it has one.
    public var color: RGBColor?
    public var children: [PDFOutlineItem]
}

extension PDFDocument {
    /// The deepest outline this reader reads.
    static let maximumOutlineDepth = 64
    /// The most outline items this reader reads, in all.
    static let maximumOutlineItems = 100_000

    /// The document outline (`/Outlines`), items in order with their children. Each item object is
    /// read once (an outline whose `/Next` or `/First` loops back ends there), at most
    /// ``maximumOutlineDepth`` levels and ``maximumOutlineItems`` items.
    public func outline() -> [PDFOutlineItem] {
        guard let root = resolve(catalog["Outlines"] ?? .null).dictionaryValue else { return [] }
        var visited = Set<Int>()
        var count = 0
        return outlineItems(from: root["First"], depth: 0, visited: &visited, count: &count)
    }

    private func outlineItems(from first: PDFObject?, depth: Int, visited: inout Set<Int>, count: inout Int)
        -> [PDFOutlineItem]
    {
        guard depth < Self.maximumOutlineDepth else { return [] }
        var items: [PDFOutlineItem] = []
        var next = first
        while let entry = next, count < Self.maximumOutlineItems {
            if let number = entry.referenceValue?.number, !visited.insert(number).inserted { break }
            guard let node = resolve(entry).dictionaryValue else { break }
            count += 1
            let style = resolve(node["F"] ?? .null).intValue ?? 0
            items.append(
                PDFOutlineItem(
                    title: resolve(node["Title"] ?? .null).textValue ?? "",
                    action: action(node["A"]) ?? destinationAction(node["Dest"]),
                    isExpanded: (resolve(node["Count"] ?? .null).intValue ?? 0) > 0,
                    isBold: style & 2 != 0,
                    isItalic: style & 1 != 0,
                    color: node["C"].flatMap { PDFValues.color($0, resolve: resolve) },
                    children: outlineItems(from: node["First"], depth: depth + 1, visited: &visited, count: &count)))
            next = node["Next"]
        }
        return items
    }
}
