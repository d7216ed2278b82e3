import Hummingbird
import InstantJSON

extension StoredRecord {
    /// Writes records as a JSON array of ``writeSyncJSON(into:using:)``: the `records` of sync
    /// answers and snapshots. With a `token`, records its user may not view go out as tombstones
    /// (``InstantAPI/visible(_:to:)``).
    static func writeSyncJSONArray(
        _ records: some Collection<StoredRecord>, visibleTo token: ClientToken? = nil, into buffer: inout ByteBuffer
    ) {
        var starts: [Int]? = nil
        buffer.writeInteger(UInt8(ascii: "["))
        writeSyncJSONList(records, visibleTo: token, into: &buffer, startsOfRecords: &starts)
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// Writes records' sync JSON one after the other, separated by commas, and where each begins
    /// into `starts` unless it is `nil`.
    static func writeSyncJSONList(
        _ records: some Collection<StoredRecord>, visibleTo token: ClientToken? = nil, into buffer: inout ByteBuffer,
        startsOfRecords starts: inout [Int]?
    ) {
        // Each record is read where it is (by index, not copied out): answers carry thousands, and
        // a copy of each costs more than writing it. Room for them all is made at once: an answer
        // can be megabytes, which growing the buffer step by step would copy again at every step.
        buffer.reserveCapacity(buffer.writerIndex + syncJSONSizeEstimate(of: records))
        starts?.reserveCapacity(records.count)
        let hides = token?.collaborationPermissions != nil
        var scratch: [UInt8] = []
        for index in records.indices {
            if index != records.startIndex { buffer.writeInteger(UInt8(ascii: ",")) }
            starts?.append(buffer.writerIndex)
            if hides, let token {
                InstantAPI.visible(records[index], to: token).writeSyncJSON(into: &buffer, using: &scratch)
            } else {
                records[index].writeSyncJSON(into: &buffer, using: &scratch)
            }
        }
    }

    /// About how many bytes the sync JSON of `records` takes: their contents, the strings of their
    /// metadata (of any length a client or a token gave them), and for each
    /// ``syncJSONRecordOverhead``. It is also the measure of the work of writing it
    /// (``LargeWork/run(writing:_:)``): tombstones count, though they have no content.
    static func syncJSONSizeEstimate(of records: some Collection<StoredRecord>) -> Int {
        var size = 0
        for index in records.indices {
            let record = records[index]
            size += record.content.count + record.id.utf8.count + (record.group?.utf8.count ?? 0)
            size += (record.createdBy?.utf8.count ?? 0) + (record.updatedBy?.utf8.count ?? 0)
            size += syncJSONRecordOverhead
        }
        return size
    }

    /// About what a record's sync JSON takes besides its content and the strings of its metadata:
    /// keys, punctuation, numbers.
    static let syncJSONRecordOverhead = 160

    /// Writes the record as the client routes send it (docs/PROTOCOL.md, "Records on the wire"):
    /// metadata plus the stored Instant JSON content, copied as stored (the server wrote it, so it
    /// is valid JSON), or `null` with `"deleted": true` for a tombstone.
    ///
    /// The content goes into `buffer` as it is; the metadata is put together in `scratch` (emptied
    /// first; its capacity serves the next record) and copied into `buffer` at once: a buffer's
    /// every write checks its ownership and room, which for the dozen small pieces of the metadata
    /// costs more than the pieces.
    func writeSyncJSON(into buffer: inout ByteBuffer, using scratch: inout [UInt8]) {
        if isDeleted || content.isEmpty {
            buffer.writeStaticString(#"{"content":null"#)
        } else {
            buffer.writeStaticString(#"{"content":"#)
            content.withUnsafeBytes { _ = buffer.writeBytes($0) }
        }
        scratch.removeAll(keepingCapacity: true)
        func append(_ literal: StaticString) {
            scratch.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }
        // The metadata in key order, each key with its punctuation as one literal.
        func member(_ key: StaticString, _ value: String?) {
            append(key)
            if let value { JSONValue.writeString(value, into: &scratch) } else { append("null") }
        }
        member(#","createdBy":"#, createdBy)
        if isDeleted { append(#","deleted":true"#) }
        member(#","group":"#, group)
        member(#","id":"#, id)
        member(#","kind":"#, kind.rawValue)
        if let pdfObjectID {
            append(#","pdfObjectId":"#)
            scratch.append(contentsOf: String(pdfObjectID).utf8)
        }
        append(#","revision":"#)
        scratch.append(contentsOf: String(revision).utf8)
        member(#","updatedBy":"#, updatedBy)
        scratch.append(UInt8(ascii: "}"))
        buffer.writeBytes(scratch)
    }
}

/// The sync JSON of records that the answers of a group share (``SharedRecords``), written once:
/// each answer takes the part from the first record after its base revision on, as it is
/// (``SyncAnswerBody``).
///
/// It extends the JSON of the records that a group carries from the group before it
/// (``RecordsDerivation``): their JSON is taken as that group's answers wrote it, in place, and only
/// the group's own records are written. So the JSON of a record is written once while it is in the
/// answers of one group after another, instead of once in every group.
struct SharedSyncJSON: RecordsDerivation {
    /// Runs of records' JSON, each run in one buffer; together the records in order.
    private let runs: [Run]
    /// The index (in the shared records) of each run's first record.
    private let firstIndices: [Int]

    /// The JSON of consecutive records in one buffer, separated by commas.
    private struct Run {
        var text: ByteBuffer
        /// Where each record's JSON begins in ``text``.
        var starts: ArraySlice<Int>
        /// Where the last record's JSON ends in ``text``.
        var end: Int

        init(_ records: ArraySlice<StoredRecord>) {
            var text = ByteBuffer()
            var starts: [Int]? = []
            StoredRecord.writeSyncJSONList(records, into: &text, startsOfRecords: &starts)
            self.text = text
            self.starts = ArraySlice(starts ?? [])
            end = text.writerIndex
        }

        private init(text: ByteBuffer, starts: ArraySlice<Int>, end: Int) {
            self.text = text
            self.starts = starts
            self.end = end
        }

        /// The run of the records from `offset` to `offset + count` (counted from its first).
        func part(from offset: Int, count: Int) -> Run {
            let (first, last) = (starts.startIndex + offset, starts.startIndex + offset + count)
            // A record's JSON ends where the comma before the next one begins.
            return Run(text: text, starts: starts[first..<last], end: last < starts.endIndex ? starts[last] - 1 : end)
        }

        /// Where each record's JSON is in ``text``, moved by `shift`.
        func places(shiftedBy shift: Int) -> [Range<Int>] {
            // A record's JSON ends where the comma before the next one begins.
            zip(starts, starts.dropFirst().map { $0 - 1 } + [end]).map { $0 + shift..<$1 + shift }
        }

        /// The JSON of the records from `offset` (counted from its first) to its last: a slice of
        /// ``text``, which shares its bytes.
        func slice(from offset: Int) -> ByteBuffer? {
            let start = starts[starts.startIndex + offset]
            return text.getSlice(at: start, length: end - start)
        }
    }

    init(_ records: [StoredRecord], extending earlier: (value: SharedSyncJSON, offset: Int, count: Int)?) {
        var runs = earlier.map { $0.value.runs(from: $0.offset, count: $0.count) } ?? []
        let carried = earlier?.count ?? 0
        if carried < records.count { runs.append(Run(records[carried...])) }
        var firstIndices: [Int] = []
        var index = 0
        for run in runs {
            firstIndices.append(index)
            index += run.starts.count
        }
        self.runs = runs
        self.firstIndices = firstIndices
    }

    /// The runs of the records from `offset` to `offset + count`.
    private func runs(from offset: Int, count: Int) -> [Run] {
        var parts: [Run] = []
        for (run, first) in zip(runs, firstIndices) {
            let (from, to) = (max(offset, first), min(offset + count, first + run.starts.count))
            if from < to { parts.append(run.part(from: from - first, count: to - from)) }
        }
        return parts
    }

    /// Copies the JSON of the records of `range` (indices in the shared records), separated by
    /// commas, to `buffer`; returns where each record's JSON is in it. Writes nothing and returns
    /// `nil` when that would take `buffer` past `maximumBytes` (or `range` is not all among the
    /// shared records).
    func copy(_ range: Range<Int>, into buffer: inout ByteBuffer, upTo maximumBytes: Int) -> [Range<Int>]? {
        let parts = runs(from: range.lowerBound, count: range.count)
        let bytes = parts.reduce(parts.count - 1) { $0 + $1.end - ($1.starts.first ?? $1.end) }
        guard parts.reduce(0, { $0 + $1.starts.count }) == range.count, buffer.writerIndex + bytes <= maximumBytes
        else { return nil }
        var places: [Range<Int>] = []
        places.reserveCapacity(range.count)
        for part in parts {
            guard let first = part.starts.first, let slice = part.slice(from: 0) else { continue }
            if !places.isEmpty { buffer.writeInteger(UInt8(ascii: ",")) }
            places.append(contentsOf: part.places(shiftedBy: buffer.writerIndex - first))
            buffer.writeImmutableBuffer(slice)
        }
        return places
    }

    /// Adds the JSON of the records from the one at `index` (in the shared records) to the last,
    /// separated by commas, to `body`: the runs' bytes as they are, not copied.
    func write(from index: Int, into body: inout SyncAnswerBody) {
        var wrote = false
        for (run, first) in zip(runs, firstIndices) where index < first + run.starts.count {
            guard let slice = run.slice(from: max(index - first, 0)) else { continue }
            if wrote { body.text.writeInteger(UInt8(ascii: ",")) }
            body.append(shared: slice)
            wrote = true
        }
    }
}
