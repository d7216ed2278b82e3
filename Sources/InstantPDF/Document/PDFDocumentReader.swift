import Foundation

/// Resolves the objects of one file: the cross-reference table, object streams and a cache.
///
/// Not thread-safe; a ``PDFDocument`` serialises access to it.
final class PDFDocumentReader {
    let bytes: PDFBytes
    /// What the document may still decode: every stream it reads takes from it.
    let budget: DecodeBudget
    var table = CrossReferenceTable()
    private var cache: [Int: PDFObject] = [:]
    private var objectStreams: [Int: [PDFObject]] = [:]
    private var resolving = Set<Int>()
    /// Decrypts strings and streams of encrypted files; `nil` for files that are not encrypted.
    var security: StandardSecurityHandler?
    /// The object number of the /Encrypt dictionary, whose strings are not encrypted.
    var encryptObjectNumber: Int?
    /// Objects found by scanning because their cross-reference offset was wrong.
    private(set) var recoveredObjects = Set<Int>()
    /// Where each object really is, found by scanning the file the first time an offset is wrong.
    private lazy var scannedOffsets: [Int: (Int, Int)] = scanObjectOffsets().offsets

    init(bytes: PDFBytes, budget: DecodeBudget) {
        self.bytes = bytes
        self.budget = budget
    }

    /// The object a reference points to; `null` for free, missing or broken objects (as the
    /// specification says for references to objects that do not exist).
    func object(_ reference: PDFReference) -> PDFObject {
        let number = reference.number
        if let cached = cache[number] { return cached }
        guard resolving.insert(number).inserted else { return .null }
        defer { resolving.remove(number) }
        var object = PDFObject.null
        switch table.entries[number] {
        case .offset(let offset, _)?:
            if let found = try? readObject(at: offset, expecting: number) {
                object = found
            } else if let recovered = scannedOffsets[number]?.0, recovered != offset {
                // The cross-reference offset is wrong: use where the object really is.
                object = (try? readObject(at: recovered, expecting: number)) ?? .null
                if object != .null { recoveredObjects.insert(number) }
            }
            if let security, number != encryptObjectNumber {
                object = decrypt(object, with: security, number: number, generation: reference.generation, depth: 0)
            }
        case .compressed(let streamNumber, let index)?:
            if let objects = try? objectStream(streamNumber), index < objects.count { object = objects[index] }
        default:
            break
        }
        cache[number] = object
        return object
    }

    private func decrypt(
        _ object: PDFObject, with security: StandardSecurityHandler, number: Int, generation: Int, depth: Int
    ) -> PDFObject {
        guard depth < PDFParser.maximumDepth else { return object }
        func inner(_ value: PDFObject) -> PDFObject {
            decrypt(value, with: security, number: number, generation: generation, depth: depth + 1)
        }
        switch object {
        case .string(let data):
            return .string(security.decrypt(data, number: number, generation: generation, isStream: false))
        case .array(let elements):
            return .array(elements.map(inner))
        case .dictionary(let dictionary):
            return .dictionary(PDFDictionary(dictionary.entries.mapValues(inner)))
        case .stream(let stream):
            // Cross-reference streams are never encrypted, metadata streams only when the handler says so.
            guard stream.dictionary.type != "XRef", security.encryptsMetadata || stream.dictionary.type != "Metadata"
            else { return object }
            let dictionary = PDFDictionary(stream.dictionary.entries.mapValues(inner))
            let data = security.decrypt(stream.rawData, number: number, generation: generation, isStream: true)
            return .stream(PDFStream(dictionary: dictionary, rawData: data))
        default:
            return object
        }
    }

    /// Drops objects read before the security handler was known (they were not decrypted).
    func forgetCachedObjects() {
        cache.removeAll()
        objectStreams.removeAll()
    }

    /// Follows references until a direct object.
    func resolve(_ object: PDFObject) -> PDFObject {
        var current = object
        var hops = 0
        while case .reference(let reference) = current, hops < 32 {
            current = self.object(reference)
            hops += 1
        }
        if case .reference = current { return .null }
        return current
    }

    private func readObject(at offset: Int, expecting number: Int) throws(PDFError) -> PDFObject {
        guard offset >= 0, offset < bytes.count else {
            throw PDFError(.damaged, "object \(number) is outside the file")
        }
        var parser = PDFParser(bytes: bytes, position: offset)
        parser.resolveLength = { [unowned self] reference in
            guard reference.number != number else { return nil }
            return self.resolve(.reference(reference)).intValue
        }
        let (reference, object) = try parser.readIndirectObject()
        guard reference.number == number else {
            throw PDFError(.damaged, "object \(number) is not at its cross-reference offset")
        }
        return object
    }

    func objectStreamNumbers(_ stream: PDFStream) throws(PDFError) -> [Int] {
        let data = PDFBytes(try StreamFilters.decode(stream, resolve: resolve, budget: budget))
        let count = stream.dictionary["N"]?.intValue ?? 0
        var parser = PDFParser(bytes: data)
        var numbers: [Int] = []
        for _ in 0..<max(0, min(count, 1_000_000)) {
            guard let number = parser.readUnsignedInteger(), parser.readUnsignedInteger() != nil else { break }
            numbers.append(number)
        }
        return numbers
    }

    /// The objects of an object stream, parsed once.
    private func objectStream(_ number: Int) throws(PDFError) -> [PDFObject] {
        if let objects = objectStreams[number] { return objects }
        objectStreams[number] = []  // guards against a stream that contains itself
        guard case .stream(let stream) = object(PDFReference(number: number, generation: 0)) else {
            throw PDFError(.damaged, "object stream \(number) is missing")
        }
        let data = PDFBytes(try StreamFilters.decode(stream, resolve: resolve, budget: budget))
        let count = max(0, min(stream.dictionary["N"]?.intValue ?? 0, 1_000_000))
        let first = stream.dictionary["First"]?.intValue ?? 0
        var header = PDFParser(bytes: data)
        var offsets: [Int] = []
        for _ in 0..<count {
            guard header.readUnsignedInteger() != nil, let offset = header.readUnsignedInteger() else { break }
            offsets.append(offset)
        }
        var objects: [PDFObject] = []
        for offset in offsets {
            var parser = PDFParser(bytes: data, position: first &+ offset)
            let start = parser.position
            objects.append((try? parser.readObject()) ?? .null)
            // Many entries can point at the same large object: each parse takes what it holds.
            try budget.spend(parser.position - start + parser.objectCount * MemoryLayout<PDFObject>.stride)
        }
        objectStreams[number] = objects
        return objects
    }
}
