/// The output of one decoding step (a stream filter, a predictor, an image's samples), refused as
/// soon as it would grow past what the document's ``DecodeBudget`` has left: it never holds more
/// than the budget allows, however much the input would expand.
struct DecodedBytes {
    private(set) var bytes: [UInt8] = []
    private let limit: Int
    private let budget: DecodeBudget

    /// An empty output with room reserved for `expected` bytes (at most what the budget has left).
    init(budget: DecodeBudget, expected: Int = 0) {
        self.budget = budget
        limit = budget.remaining
        bytes.reserveCapacity(min(max(expected, 0), limit))
    }

    var count: Int { bytes.count }

    /// Whether `count` more bytes fit.
    func hasRoom(for count: Int) -> Bool { count <= limit - bytes.count }

    /// Throws unless `count` more bytes fit.
    func requireRoom(for count: Int) throws(PDFError) {
        guard hasRoom(for: count) else { throw budget.refuseDecoding() }
    }

    mutating func append(_ byte: UInt8) throws(PDFError) {
        try requireRoom(for: 1)
        bytes.append(byte)
    }

    mutating func append<Bytes: Collection<UInt8>>(contentsOf newBytes: Bytes) throws(PDFError) {
        try requireRoom(for: newBytes.count)
        bytes.append(contentsOf: newBytes)
    }

    mutating func append(_ byte: UInt8, count: Int) throws(PDFError) {
        try requireRoom(for: count)
        bytes.append(contentsOf: repeatElement(byte, count: count))
    }

    /// The decoded bytes, taken from the budget.
    consuming func finish() throws(PDFError) -> [UInt8] {
        try budget.spend(bytes.count)
        return bytes
    }
}
