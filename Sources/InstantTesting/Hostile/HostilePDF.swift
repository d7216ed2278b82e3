import Foundation

/// PDFs built to attack a PDF reader, for tests and measurements of its limits: streams that
/// decode to gigabytes from kilobytes (decompression bombs), structures whose parsed form takes
/// far more memory than their bytes. Each is a valid one-page PDF otherwise.
public enum HostilePDF {
    /// A stream filter, as `/Filter` names it.
    public enum Filter: String, Sendable, CaseIterable {
        case flate = "FlateDecode"
        case runLength = "RunLengthDecode"
        case ascii85 = "ASCII85Decode"
        case lzw = "LZWDecode"
    }

    /// A stream that decodes to `decodedSize` bytes, nearly all zeros, through `filters`.
    public struct Bomb: Sendable {
        /// The filters, in the order a reader applies them.
        public var filters: [Filter]
        /// The bytes the stream's filters decode to (before a predictor of `parameters`).
        public var decodedSize: Int
        /// The stream's `/DecodeParms`, as PDF source (such as a predictor's).
        public var parameters: String?

        /// A stream of `decodedSize` bytes behind `filters`. Only the last filter may be other than
        /// `flate` (the encoders work on runs of zeros, and flate on anything).
        public init(_ filters: [Filter], decodedSize: Int, parameters: String? = nil) {
            precondition(filters.dropLast().allSatisfy { $0 == .flate }, "only the last filter may be other than flate")
            self.filters = filters
            self.decodedSize = decodedSize
            self.parameters = parameters
        }

        /// The stream's data: `prefix` and zeros up to `decodedSize`, encoded by the last filter,
        /// then by each one before it.
        func data(prefix: [UInt8]) -> [UInt8] {
            let zeros = max(0, decodedSize - prefix.count)
            var encoded: EncodedBytes
            switch filters.last {
            case nil: return EncodedBytes([.literal(prefix), .repeated([0], count: zeros)]).bytes
            case .flate: encoded = EncodedBytes([.literal(prefix), .repeated([0], count: zeros)])
            case .runLength: encoded = EncodedBytes.runLength(prefix, zeros: zeros)
            case .ascii85: encoded = EncodedBytes.ascii85(prefix, zeros: zeros)
            case .lzw: encoded = EncodedBytes([.literal(EncodedBytes.lzw(prefix, zeros: zeros))])
            }
            if filters.last == .flate { encoded = EncodedBytes([.literal(encoded.deflated())]) }
            for _ in filters.dropLast() { encoded = EncodedBytes([.literal(encoded.deflated())]) }
            return encoded.bytes
        }

        /// The stream's dictionary entries besides `/Length`.
        var entries: String {
            let names = filters.map { "/\($0.rawValue)" }.joined(separator: " ")
            return "/Filter [\(names)]" + (parameters.map { " /DecodeParms \($0)" } ?? "")
        }
    }

    /// A one-page PDF with an annotation in an object stream per bomb: the stream holds the
    /// annotation, then zeros up to the bomb's size. Reading the PDF's annotations decodes every
    /// bomb; nothing of the zeros is kept.
    public static func objectStreams(_ bombs: [Bomb]) -> Data {
        var objects = PDFObjects()
        let first = 1_000
        for (index, bomb) in bombs.enumerated() {
            let annotation = "<< /Type /Annot /Subtype /Square /Rect [0 0 10 10] >>"
            let header = "\(first + index) 0\n"
            let stream = objects.add(
                stream: bomb.data(prefix: Array((header + annotation + " ").utf8)),
                "/Type /ObjStm /N 1 /First \(header.utf8.count) \(bomb.entries)")
            objects.compressed[first + index] = (stream, 0)
        }
        return objects.onePage(annots: bombs.indices.map { first + $0 })
    }

    /// A one-page PDF whose cross-reference stream lists `count` more entries (free objects,
    /// numbered from 1,000,000) than the file has objects, in 7 bytes each.
    public static func crossReferenceEntries(_ count: Int) -> Data {
        PDFObjects().onePage(annots: [], extraFreeEntries: count)
    }

    /// A one-page PDF whose annotations are `count` objects of one object stream that all point at
    /// the same array of `elements` integers: parsing them parses the array `count` times.
    public static func objectStreamRepeats(_ count: Int, elements: Int) -> Data {
        precondition(count < 65_536, "the cross-reference stream holds indexes in an object stream in 2 bytes")
        var objects = PDFObjects()
        let first = 100
        let header = (0..<count).map { "\(first + $0) 0" }.joined(separator: " ") + "\n"
        let array = "[" + String(repeating: "0 ", count: elements) + "]"
        let stream = objects.add(
            stream: EncodedBytes([.literal(Array((header + array).utf8))]).deflated(),
            "/Type /ObjStm /N \(count) /First \(header.utf8.count) /Filter /FlateDecode")
        for index in 0..<count { objects.compressed[first + index] = (stream, index) }
        return objects.onePage(annots: (0..<count).map { first + $0 })
    }
}

/// The objects of a one-page PDF being built, written with a cross-reference stream (which can
/// place objects in object streams).
private struct PDFObjects {
    private var bodies: [Int: [UInt8]] = [:]
    /// Objects inside object streams: their stream and index.
    var compressed: [Int: (stream: Int, index: Int)] = [:]
    private var next = 4

    /// Adds an object and returns its number.
    mutating func add(_ text: String) -> Int {
        bodies[next] = Array(text.utf8)
        next += 1
        return next - 1
    }

    /// Adds a stream with `data` and the dictionary entries `entries` besides `/Length`.
    mutating func add(stream data: [UInt8], _ entries: String) -> Int {
        add(bytes: Array("<< /Length \(data.count) \(entries) >>\nstream\n".utf8) + data + Array("\nendstream".utf8))
    }

    private mutating func add(bytes: [UInt8]) -> Int {
        bodies[next] = bytes
        next += 1
        return next - 1
    }

    /// The PDF: catalog (1), pages (2), a US Letter page (3) with these annotations, the objects,
    /// and a cross-reference stream with `extraFreeEntries` more entries from 1,000,000.
    func onePage(annots: [Int], extraFreeEntries: Int = 0) -> Data {
        var all = bodies
        all[1] = Array("<< /Type /Catalog /Pages 2 0 R >>".utf8)
        all[2] = Array("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8)
        let list = annots.map { "\($0) 0 R" }.joined(separator: " ")
        all[3] = Array("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots [\(list)] >>".utf8)
        var file = Array("%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        var offsets: [Int: Int] = [:]
        for number in all.keys.sorted() {
            offsets[number] = file.count
            file += Array("\(number) 0 obj\n".utf8) + all[number]! + Array("\nendobj\n".utf8)
        }
        let xref = max(next, (compressed.keys.max() ?? 0) + 1)
        offsets[xref] = file.count
        // Entries of 1 + 4 + 2 bytes: type, offset or object stream, generation or index.
        func entry(_ type: UInt8, _ second: Int, _ third: Int) -> [UInt8] {
            [type] + withUnsafeBytes(of: UInt32(second).bigEndian, Array.init)
                + withUnsafeBytes(of: UInt16(third).bigEndian, Array.init)
        }
        var table: [UInt8] = entry(0, 0, 65535)
        for number in 1...xref {
            if let offset = offsets[number] {
                table += entry(1, offset, 0)
            } else if let (stream, index) = compressed[number] {
                table += entry(2, stream, index)
            } else {
                table += entry(0, 0, 0)
            }
        }
        var parts: [EncodedBytes.Part] = [.literal(table)]
        var index = "0 \(xref + 1)"
        if extraFreeEntries > 0 {
            parts.append(.repeated([0], count: 7 * extraFreeEntries))
            index += " 1000000 \(extraFreeEntries)"
        }
        let data = EncodedBytes(parts).deflated()
        file += Array(
            ("\(xref) 0 obj\n<< /Type /XRef /Size \(max(xref + 1, extraFreeEntries > 0 ? 1_000_000 + extraFreeEntries : 0)) "
                + "/W [1 4 2] /Index [\(index)] /Root 1 0 R /Filter /FlateDecode /Length \(data.count) >>\nstream\n")
                .utf8)
        file += data + Array("\nendstream\nendobj\nstartxref\n\(offsets[xref]!)\n%%EOF\n".utf8)
        return Data(file)
    }
}
