import Crypto
import Foundation

/// The objects an incremental update appends to a file (ISO 32000-1, 7.5.6), and their bytes.
///
/// The original bytes stay untouched: changed objects are written again under their own number
/// and generation, new objects get numbers from the trailer's `/Size` on, deleted ones become free
/// entries. The new cross-reference section is of the file's kind (a table, or a stream for files
/// whose newest section is a stream), its trailer keeps `/Root`, `/Info` and `/Encrypt`, points to
/// the previous section with `/Prev` and keeps the first `/ID` with a new second one.
struct IncrementalUpdate {
    private let document: PDFDocument
    /// Objects to write, by number, with their generation.
    private(set) var objects: [Int: (generation: Int, object: PDFObject)] = [:]
    /// Objects to free, with the generation they had.
    private(set) var freed: [Int: Int] = [:]
    private var nextNumber: Int
    /// The objects the document's structure stands on: the catalog, the pages and the nodes of the
    /// page tree above them. They stay dictionaries and are never freed.
    let structural: Set<Int>

    init(document: PDFDocument) {
        self.document = document
        let highest = document.reader.table.entries.keys.max() ?? 0
        // Above every number the trailer names too: a damaged file can name an object it does not
        // have (such as an /Encrypt that resolves to nothing), which a new object must not become.
        let named = ["Root", "Info", "Encrypt"].compactMap { document.trailer[$0]?.referenceValue?.number }
        nextNumber = max(document.trailer["Size"]?.intValue ?? 0, highest + 1, (named.max() ?? 0) + 1, 1)
        var structural = Set<Int>()
        if let root = document.trailer["Root"]?.referenceValue { structural.insert(root.number) }
        for page in document.pages {
            var node = page.reference
            var depth = 0
            while let reference = node, depth < 64, structural.insert(reference.number).inserted {
                node = document.object(reference).dictionaryValue?["Parent"]?.referenceValue
                depth += 1
            }
        }
        self.structural = structural
    }

    /// Whether the update writes nothing.
    var isEmpty: Bool { objects.isEmpty && freed.isEmpty }

    /// Adds a new object and returns its reference.
    mutating func add(_ object: PDFObject) -> PDFReference {
        let reference = PDFReference(number: nextNumber, generation: 0)
        nextNumber += 1
        let value = prepared(object, depth: 0)
        objects[reference.number] = (0, value)
        return reference
    }

    /// Writes `object` in place of an existing object, under the same number and generation.
    ///
    /// - Throws: ``PDFError/Code/unwritableRecord`` for the encryption dictionary, which must stay
    ///   as it is, and for a structural object (catalog, page tree) replaced by anything but a
    ///   dictionary: a damaged file can make them look like a page's annotations or `/Annots`.
    mutating func replace(_ reference: PDFReference, with object: PDFObject) throws(PDFError) {
        try checkWritable(reference)
        if structural.contains(reference.number), object.dictionaryValue == nil {
            throw PDFError(
                .unwritableRecord,
                "object \(reference.number) is part of the document's catalog or page tree and must stay a "
                    + "dictionary; the PDF's structure is damaged where it refers to it as something else")
        }
        freed[reference.number] = nil
        let value = prepared(object, depth: 0)
        objects[reference.number] = (reference.generation, value)
    }

    /// Frees an existing object: readers of the new version no longer find it.
    ///
    /// An object inside an object stream becomes `null` instead: the stream still holds it, and
    /// readers that check each object of a stream against the cross-reference (qpdf) would warn
    /// about a free entry for it. Structural objects (the catalog, the page tree) are never freed,
    /// even when a damaged file lists one of them as an annotation.
    mutating func free(_ reference: PDFReference) throws(PDFError) {
        guard reference.number > 0, !structural.contains(reference.number) else { return }
        try checkWritable(reference)
        if case .compressed? = document.reader.table.entries[reference.number] {
            objects[reference.number] = (0, .null)
            return
        }
        objects[reference.number] = nil
        freed[reference.number] = reference.generation
    }

    private func checkWritable(_ reference: PDFReference) throws(PDFError) {
        guard reference.number != document.reader.encryptObjectNumber else {
            throw PDFError(
                .unwritableRecord,
                "object \(reference.number) is the file's encryption dictionary, which cannot be changed; "
                    + "the PDF's structure is damaged where it refers to it")
        }
    }

    /// The object as the update holds it: its new version if it was replaced, else the file's.
    func current(_ reference: PDFReference) -> PDFObject {
        if let entry = objects[reference.number] { return entry.object }
        if freed[reference.number] != nil { return .null }
        return document.object(reference)
    }

    /// Streams nested in dictionaries or arrays become indirect objects (a stream must be one), and
    /// new streams without a filter are compressed.
    private mutating func prepared(_ object: PDFObject, depth: Int) -> PDFObject {
        guard depth < 64 else { return object }
        switch object {
        case .array(let elements):
            return .array(
                elements.map { element in
                    if case .stream = element { return .reference(add(element)) }
                    return prepared(element, depth: depth + 1)
                })
        case .dictionary(let dictionary):
            return .dictionary(preparedEntries(dictionary, depth: depth))
        case .stream(var stream):
            stream.dictionary = preparedEntries(stream.dictionary, depth: depth)
            if stream.dictionary["Filter"] == nil, stream.rawData.count > 64 {
                stream.rawData = Data(StreamFilters.deflate([UInt8](stream.rawData)))
                stream.dictionary["Filter"] = .name("FlateDecode")
            }
            return .stream(stream)
        default:
            return object
        }
    }

    private mutating func preparedEntries(_ dictionary: PDFDictionary, depth: Int) -> PDFDictionary {
        var result = PDFDictionary()
        for (key, value) in dictionary.entries {
            if case .stream = value {
                result[key] = .reference(add(value))
            } else {
                result[key] = prepared(value, depth: depth + 1)
            }
        }
        return result
    }

    // MARK: - Bytes

    /// The bytes to append to the original file.
    func bytes() -> [UInt8] {
        let original = document.reader.bytes
        let start = original.count
        var output: [UInt8] = []
        // The original may end without an end-of-line after %%EOF.
        if let last = original.last, last != 0x0A, last != 0x0D { output.append(0x0A) }
        var offsets: [Int: Int] = [:]
        let security = document.reader.security
        for number in objects.keys.sorted() {
            guard let (generation, object) = objects[number] else { continue }
            offsets[number] = start + output.count
            let stored = security.map { encrypted(object, with: $0, number: number, generation: generation) } ?? object
            output += Array("\(number) \(generation) obj\n".utf8)
            PDFSerializer.write(stored, to: &output)
            output += Array("\nendobj\n".utf8)
        }
        var trailer = trailerDictionary()
        if usesStream {
            let streamNumber = nextNumber
            trailer["Size"] = .integer(streamNumber + 1)
            offsets[streamNumber] = start + output.count
            let xref = crossReferenceStream(trailer: trailer, offsets: offsets, streamNumber: streamNumber)
            output += Array("\(streamNumber) 0 obj\n".utf8)
            PDFSerializer.write(.stream(xref), to: &output)
            output += Array("\nendobj\n".utf8)
            output += Array("startxref\n\(offsets[streamNumber]!)\n%%EOF\n".utf8)
        } else {
            trailer["Size"] = .integer(nextNumber)
            let xrefOffset = start + output.count
            output += crossReferenceTable(offsets: offsets)
            output += Array("trailer\n".utf8)
            PDFSerializer.write(.dictionary(trailer), to: &output)
            output += Array("\nstartxref\n\(xrefOffset)\n%%EOF\n".utf8)
        }
        return output
    }

    /// A file whose newest section is a stream gets a stream; so does a rebuilt file with objects
    /// in object streams (a table cannot point into them).
    private var usesStream: Bool {
        let reader = document.reader
        if document.crossReferenceWasRebuilt {
            return reader.table.entries.values.contains { if case .compressed = $0 { true } else { false } }
        }
        guard let start = reader.findStartXRef(), start >= 0, start < reader.bytes.count else { return false }
        var index = start
        while index < reader.bytes.count, PDFParser.isWhitespace(reader.bytes[index]) { index += 1 }
        return !reader.bytes[index...].starts(with: Array("xref".utf8))
    }

    private func trailerDictionary() -> PDFDictionary {
        var trailer = PDFDictionary()
        trailer["Root"] = document.trailer["Root"]
        if document.resolve(document.trailer["Info"] ?? .null).dictionaryValue != nil {
            trailer["Info"] = document.trailer["Info"]
        }
        if document.reader.security != nil { trailer["Encrypt"] = document.trailer["Encrypt"] }
        if !document.crossReferenceWasRebuilt, let previous = document.reader.findStartXRef() {
            trailer["Prev"] = .integer(previous)
        }
        let ids = document.resolve(document.trailer["ID"] ?? .null).arrayValue ?? []
        let permanent = ids.first.flatMap { document.resolve($0).stringData }
        // The file key of an encrypted file depends on its first id: a file without one keeps none.
        if permanent == nil, document.reader.security != nil { return trailer }
        var hasher = Insecure.MD5()
        hasher.update(data: permanent ?? Data())
        hasher.update(data: Data(String(document.reader.bytes.count).utf8))
        hasher.update(data: Data(String(Date().timeIntervalSince1970).utf8))
        for number in objects.keys.sorted() { hasher.update(data: Data(String(number).utf8)) }
        let changing = Data(hasher.finalize())
        trailer["ID"] = .array([.string(permanent ?? changing), .string(changing)])
        return trailer
    }

    /// Every entry of the section: the written objects, the freed ones (linked from object 0) and,
    /// for a rebuilt file, every object the scan found, so the section stands on its own.
    private func entries(offsets: [Int: Int]) -> [Int: CrossReferenceTable.Entry] {
        var entries: [Int: CrossReferenceTable.Entry] = [:]
        if document.crossReferenceWasRebuilt {
            for (number, entry) in document.reader.table.entries where number > 0 { entries[number] = entry }
        }
        for (number, offset) in offsets {
            entries[number] = .offset(offset, generation: objects[number]?.generation ?? 0)
        }
        for number in freed.keys { entries[number] = .free }
        return entries
    }

    /// The free list: object 0 points to the first freed object, each to the next, the last to 0.
    private func freeLinks() -> [Int: Int] {
        let numbers = freed.keys.sorted()
        var links: [Int: Int] = [0: numbers.first ?? 0]
        for (index, number) in numbers.enumerated() {
            links[number] = index + 1 < numbers.count ? numbers[index + 1] : 0
        }
        return links
    }

    private func crossReferenceTable(offsets: [Int: Int]) -> [UInt8] {
        var entries = entries(offsets: offsets)
        if !freed.isEmpty || document.crossReferenceWasRebuilt { entries[0] = .free }
        let links = freeLinks()
        var output = Array("xref\n".utf8)
        for run in Self.runs(entries.keys.sorted()) {
            output += Array("\(run.first!) \(run.count)\n".utf8)
            for number in run {
                let line: String
                switch entries[number]! {
                case .offset(let offset, let generation):
                    line = Self.padded(offset, 10) + " " + Self.padded(generation, 5) + " n\r\n"
                case .free:
                    let generation = number == 0 ? 65_535 : min((freed[number] ?? 0) + 1, 65_535)
                    line = Self.padded(links[number] ?? 0, 10) + " " + Self.padded(generation, 5) + " f\r\n"
                case .compressed:
                    continue  // never in a table: `usesStream` chooses a stream for them
                }
                output += Array(line.utf8)
            }
        }
        return output
    }

    private func crossReferenceStream(trailer: PDFDictionary, offsets: [Int: Int], streamNumber: Int) -> PDFStream {
        var entries = entries(offsets: offsets)
        if !freed.isEmpty { entries[0] = .free }
        let links = freeLinks()
        let numbers = entries.keys.sorted()
        let largest = max(offsets.values.max() ?? 0, streamNumber, 65_535)
        let width = largest > 0xFFFF_FFFF ? 8 : (largest > 0xFF_FFFF ? 4 : 3)
        var data: [UInt8] = []
        func field(_ value: Int, _ size: Int) {
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) { data.append(UInt8(value >> shift & 0xFF)) }
        }
        for number in numbers {
            switch entries[number]! {
            case .offset(let offset, let generation):
                field(1, 1)
                field(offset, width)
                field(generation, 2)
            case .compressed(let stream, let index):
                field(2, 1)
                field(stream, width)
                field(index, 2)
            case .free:
                field(0, 1)
                field(links[number] ?? 0, width)
                field(number == 0 ? 65_535 : min((freed[number] ?? 0) + 1, 65_535), 2)
            }
        }
        var dictionary = trailer
        dictionary["Type"] = .name("XRef")
        dictionary["W"] = .array([.integer(1), .integer(width), .integer(2)])
        dictionary["Index"] = .array(
            Self.runs(numbers).flatMap { [PDFObject.integer($0.first!), .integer($0.count)] })
        dictionary["Filter"] = .name("FlateDecode")
        return PDFStream(dictionary: dictionary, rawData: Data(StreamFilters.deflate(data)))
    }

    /// Consecutive numbers grouped into subsections.
    private static func runs(_ sorted: [Int]) -> [[Int]] {
        var runs: [[Int]] = []
        for number in sorted {
            if let last = runs.last?.last, last + 1 == number {
                runs[runs.count - 1].append(number)
            } else {
                runs.append([number])
            }
        }
        return runs
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// Strings and streams encrypted with the file's handler, as readers expect them.
    private func encrypted(
        _ object: PDFObject, with security: StandardSecurityHandler, number: Int, generation: Int
    ) -> PDFObject {
        switch object {
        case .string(let data):
            return .string(security.encrypt(data, number: number, generation: generation, isStream: false))
        case .array(let elements):
            return .array(elements.map { encrypted($0, with: security, number: number, generation: generation) })
        case .dictionary(let dictionary):
            return .dictionary(
                PDFDictionary(
                    dictionary.entries.mapValues {
                        encrypted($0, with: security, number: number, generation: generation)
                    }))
        case .stream(let stream):
            let dictionary = PDFDictionary(
                stream.dictionary.entries.mapValues {
                    encrypted($0, with: security, number: number, generation: generation)
                })
            let data = security.encrypt(stream.rawData, number: number, generation: generation, isStream: true)
            return .stream(PDFStream(dictionary: dictionary, rawData: data))
        default:
            return object
        }
    }
}
