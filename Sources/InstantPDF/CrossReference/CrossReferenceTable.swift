import Foundation

/// Where each object of a file is: the merged cross-reference sections of the file (ISO 32000-1, 7.5.4,
/// 7.5.8), newest entry first.
struct CrossReferenceTable {
    enum Entry: Hashable {
        /// At a byte offset, with a generation number.
        case offset(Int, generation: Int)
        /// Inside an object stream, at an index.
        case compressed(stream: Int, index: Int)
        case free
    }

    private(set) var entries: [Int: Entry] = [:]
    /// The newest trailer (for xref streams, the stream's dictionary).
    var trailer = PDFDictionary()

    /// What one entry can take in memory (a key and an entry in a hash table between a quarter
    /// and three quarters full, and the old table while it grows), to count entries against the
    /// document's budget: a few bytes of a hostile cross-reference section make an entry.
    static let memoryPerEntry = 4 * (MemoryLayout<Int>.stride + MemoryLayout<Entry>.stride)

    /// Adds an entry unless a newer section already defined the object; whether it was added.
    @discardableResult
    mutating func addIfAbsent(_ number: Int, _ entry: Entry) -> Bool {
        guard entries[number] == nil else { return false }
        entries[number] = entry
        return true
    }

    /// Adds missing trailer keys from an older trailer.
    mutating func mergeTrailer(_ older: PDFDictionary) {
        for (key, value) in older.entries where trailer[key] == nil && key != "Prev" && key != "XRefStm" {
            trailer[key] = value
        }
    }
}

extension PDFDocumentReader {
    /// Reads the chain of cross-reference sections from `startxref`, following `/Prev` and `/XRefStm`.
    func readCrossReferenceChain() throws(PDFError) -> CrossReferenceTable {
        guard let start = findStartXRef() else { throw PDFError(.damaged, "no `startxref` at the end of the file") }
        var table = CrossReferenceTable()
        var visited = Set<Int>()
        var pending: [Int] = [start]
        var first = true
        while let offset = pending.first {
            pending.removeFirst()
            guard visited.insert(offset).inserted else { continue }
            guard visited.count <= 10_000 else { throw PDFError(.damaged, "too many cross-reference sections") }
            guard offset >= 0, offset < bytes.count else {
                throw PDFError(.damaged, "a cross-reference offset (\(offset)) points outside the file")
            }
            let trailer = try readCrossReferenceSection(at: offset, into: &table)
            if first {
                table.trailer = trailer
                first = false
            } else {
                table.mergeTrailer(trailer)
            }
            // A hybrid file's /XRefStm is read right after its table, before /Prev.
            if let hybrid = trailer["XRefStm"]?.intValue, !visited.contains(hybrid) {
                _ = try? readCrossReferenceSection(at: hybrid, into: &table)
                visited.insert(hybrid)
            }
            if let previous = trailer["Prev"]?.intValue { pending.append(previous) }
        }
        return table
    }

    func findStartXRef() -> Int? {
        let keyword = Array("startxref".utf8)
        var index = bytes.count - keyword.count
        let limit = max(0, bytes.count - 4096)
        while index >= limit {
            if bytes[index] == keyword[0], bytes[index..<index + keyword.count].elementsEqual(keyword) {
                var parser = PDFParser(bytes: bytes, position: index + keyword.count)
                return parser.readUnsignedInteger()
            }
            index -= 1
        }
        return nil
    }

    /// Reads one section (a table with its trailer, or an xref stream) and returns its trailer.
    func readCrossReferenceSection(at offset: Int, into table: inout CrossReferenceTable) throws(PDFError)
        -> PDFDictionary
    {
        guard offset >= 0, offset < bytes.count else {
            throw PDFError(.damaged, "a cross-reference offset (\(offset)) points outside the file")
        }
        var parser = PDFParser(bytes: bytes, position: offset)
        parser.skipWhitespaceAndComments()
        let keyword = Array("xref".utf8)
        if parser.position + 4 <= bytes.count, bytes[parser.position..<parser.position + 4].elementsEqual(keyword) {
            parser.position += 4
            return try readTable(&parser, into: &table)
        }
        let (_, object) = try parser.readIndirectObject()
        guard let stream = object.streamValue, stream.dictionary.type == "XRef" else {
            throw PDFError(.damaged, "no cross-reference table or stream at offset \(offset)")
        }
        try readStream(stream, into: &table)
        return stream.dictionary
    }

    private func readTable(_ parser: inout PDFParser, into table: inout CrossReferenceTable) throws(PDFError)
        -> PDFDictionary
    {
        var added = 0
        while true {
            let saved = parser.position
            guard let first = parser.readUnsignedInteger(), let count = parser.readUnsignedInteger() else {
                parser.position = saved
                break
            }
            guard count < 10_000_000 else { throw PDFError(.damaged, "a cross-reference subsection is too large") }
            for index in 0..<count {
                guard let offset = parser.readUnsignedInteger(), let generation = parser.readUnsignedInteger() else {
                    throw PDFError(.damaged, "a cross-reference entry is broken near byte \(parser.position)")
                }
                let type = parser.readToken()
                let entry: CrossReferenceTable.Entry =
                    type == [UInt8(ascii: "n")] && offset != 0 ? .offset(offset, generation: generation) : .free
                try add(entry, number: first &+ index, to: &table, counting: &added)
            }
        }
        try budget.spend(added * CrossReferenceTable.memoryPerEntry)
        guard parser.readToken() == Array("trailer".utf8) else {
            throw PDFError(.damaged, "no `trailer` after a cross-reference table")
        }
        guard case .dictionary(let trailer) = try parser.readObject() else {
            throw PDFError(.damaged, "the trailer is not a dictionary")
        }
        return trailer
    }

    private func readStream(_ stream: PDFStream, into table: inout CrossReferenceTable) throws(PDFError) {
        let data = try StreamFilters.decode(stream, resolve: { $0 }, budget: budget)
        guard let widths = stream.dictionary["W"]?.arrayValue?.compactMap(\.intValue), widths.count == 3,
            widths.allSatisfy({ (0...8).contains($0) })
        else { throw PDFError(.damaged, "a cross-reference stream has no valid /W") }
        let size = stream.dictionary["Size"]?.intValue ?? 0
        var ranges: [(Int, Int)] = []
        if let index = stream.dictionary["Index"]?.arrayValue?.compactMap(\.intValue), index.count >= 2 {
            for pair in stride(from: 0, to: index.count - 1, by: 2) { ranges.append((index[pair], index[pair + 1])) }
        } else {
            ranges = [(0, size)]
        }
        let entryLength = widths.reduce(0, +)
        guard entryLength > 0 else { return }
        var position = 0
        func field(_ width: Int, default value: Int) -> Int {
            guard width > 0 else { return value }
            var result = 0
            for _ in 0..<width {
                result = result << 8 | Int(data[position])
                position += 1
            }
            return result
        }
        var added = 0
        reading: for (first, count) in ranges {
            for index in 0..<max(0, count) {
                guard position + entryLength <= data.count else { break reading }
                let type = field(widths[0], default: 1)
                let second = field(widths[1], default: 0)
                let third = field(widths[2], default: 0)
                let number = first &+ index
                // Each byte of a hostile stream can add an entry that takes far more memory.
                let entry: CrossReferenceTable.Entry
                switch type {
                case 0: entry = .free
                case 1: entry = .offset(second, generation: third)
                case 2: entry = .compressed(stream: second, index: third)
                default: continue
                }
                try add(entry, number: number, to: &table, counting: &added)
            }
        }
        try budget.spend(added * CrossReferenceTable.memoryPerEntry)
    }

    /// Adds an entry unless a newer section defined the object, and counts the entries added
    /// against the budget 65,536 at a time (the caller spends the rest of `added` at the end).
    private func add(
        _ entry: CrossReferenceTable.Entry, number: Int, to table: inout CrossReferenceTable, counting added: inout Int
    ) throws(PDFError) {
        guard table.addIfAbsent(number, entry) else { return }
        added += 1
        if added == 65_536 {
            try budget.spend(added * CrossReferenceTable.memoryPerEntry)
            added = 0
        }
    }

    /// Rebuilds the cross-reference table by scanning the whole file for `N G obj` and trailers,
    /// as mature readers do for damaged files. The last definition of an object wins.
    func rebuildCrossReference() throws(PDFError) -> CrossReferenceTable {
        let (offsets, trailerFound) = scanObjectOffsets()
        guard !offsets.isEmpty else { throw PDFError(.notAPDF, "no PDF objects were found in the file") }
        // The offsets found and the table built from them.
        try budget.spend(2 * offsets.count * CrossReferenceTable.memoryPerEntry)
        var trailer = trailerFound
        var xrefStreams: [PDFStream] = []
        var table = CrossReferenceTable()
        for (number, location) in offsets { table.addIfAbsent(number, .offset(location.0, generation: location.1)) }
        // Objects inside object streams, and the trailer of files that only have xref streams.
        for (number, location) in offsets.sorted(by: { $0.key < $1.key })
        where mayBeObjectOrCrossReferenceStream(at: location.0) {
            var parser = PDFParser(bytes: bytes, position: location.0)
            guard let (_, object) = try? parser.readIndirectObject(), let stream = object.streamValue else { continue }
            switch stream.dictionary.type {
            case "ObjStm":
                if let numbers = try? objectStreamNumbers(stream) {
                    for (position, objectNumber) in numbers.enumerated() where offsets[objectNumber] == nil {
                        table.addIfAbsent(objectNumber, .compressed(stream: number, index: position))
                    }
                }
            case "XRef":
                xrefStreams.append(stream)
            default: break
            }
        }
        if trailer["Root"] == nil, let newest = xrefStreams.last(where: { $0.dictionary["Root"] != nil }) {
            trailer = newest.dictionary
        }
        table.trailer = trailer
        return table
    }

    /// Every `N G obj` of the file (the last definition of a number wins) and the last trailer
    /// dictionary that names a catalog.
    func scanObjectOffsets() -> (offsets: [Int: (Int, Int)], trailer: PDFDictionary) {
        var offsets: [Int: (Int, Int)] = [:]
        for index in occurrences(of: "obj")
        where index + 3 == bytes.count || !PDFParser.isRegular(bytes[index + 3]) {
            if let header = objectHeader(endingBefore: index) {
                offsets[header.number] = (header.offset, header.generation)
            }
        }
        var trailer = PDFDictionary()
        for index in occurrences(of: "trailer") {
            var parser = PDFParser(bytes: bytes, position: index + 7)
            if case .dictionary(let dictionary)? = try? parser.readObject(), dictionary["Root"] != nil {
                trailer = dictionary
            }
        }
        return (offsets, trailer)
    }

    /// The offsets of every occurrence of `keyword` in the file (or in `range` of it), found with
    /// the C library's `memchr`, which skips many bytes at a time, for the keyword's first byte.
    private func occurrences(of keyword: String, in range: Range<Int>? = nil) -> [Int] {
        let needle = Array(keyword.utf8)
        let range = range ?? 0..<bytes.count
        return bytes.withUnsafeBytes { buffer -> [Int] in
            guard let base = buffer.baseAddress, range.count >= needle.count else { return [] }
            var found: [Int] = []
            var start = range.lowerBound
            let last = range.upperBound - needle.count
            while start <= last, let match = memchr(base + start, Int32(needle[0]), last - start + 1) {
                let offset = base.distance(to: UnsafeRawPointer(match))
                if needle.indices.dropFirst().allSatisfy({ buffer[offset + $0] == needle[$0] }) {
                    found.append(offset)
                    start = offset + needle.count
                } else {
                    start = offset + 1
                }
            }
            return found
        }
    }

    /// Whether the object at `offset` can be an object stream or a cross-reference stream: its
    /// dictionary, up to the `stream` keyword, names one of those types. Checking the bytes first
    /// spares parsing every object of a large file.
    private func mayBeObjectOrCrossReferenceStream(at offset: Int) -> Bool {
        let window = offset..<min(bytes.count, offset + 4096)
        guard let streamKeyword = occurrences(of: "stream", in: window).first else { return false }
        let header = offset..<streamKeyword
        return !occurrences(of: "/ObjStm", in: header).isEmpty || !occurrences(of: "/XRef", in: header).isEmpty
    }

    /// The object header `N G` just before an `obj` keyword at `index`.
    private func objectHeader(endingBefore index: Int) -> (number: Int, generation: Int, offset: Int)? {
        var cursor = index - 1
        func skipSpaces() { while cursor >= 0, PDFParser.isWhitespace(bytes[cursor]) { cursor -= 1 } }
        func readNumber() -> Int? {
            let end = cursor
            while cursor >= 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[cursor]), end - cursor < 12 {
                cursor -= 1
            }
            guard cursor < end else { return nil }
            var value = 0
            for position in (cursor + 1)...end { value = value * 10 + Int(bytes[position] - UInt8(ascii: "0")) }
            return value
        }
        skipSpaces()
        guard let generation = readNumber() else { return nil }
        guard cursor >= 0, PDFParser.isWhitespace(bytes[cursor]) else { return nil }
        skipSpaces()
        guard let number = readNumber(), number > 0 else { return nil }
        // Some writers glue the next object to the previous one: `endobj12 0 obj`.
        let glued = cursor >= 5 && bytes[(cursor - 5)...cursor].elementsEqual("endobj".utf8)
        guard cursor < 0 || !PDFParser.isRegular(bytes[cursor]) || glued else { return nil }
        return (number, generation, cursor + 1)
    }
}
