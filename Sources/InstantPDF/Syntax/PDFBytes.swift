import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes a parser reads: a file mapped into memory, or bytes held in memory. Indexes start at 0
/// and every access is bounds-checked.
///
/// A mapped file is read by the operating system page by page as objects are parsed, so opening
/// a large file costs what is read, not the size of the file. The file must not be truncated while
/// it is mapped (the stores that hand files to the reader never change a stored file).
struct PDFBytes: RandomAccessCollection, @unchecked Sendable {
    /// Owns the memory: unmaps or deallocates it when the last copy of the bytes goes away.
    private final class Storage {
        let base: UnsafeRawPointer?
        let count: Int
        let mapped: Bool

        init(base: UnsafeRawPointer?, count: Int, mapped: Bool) {
            self.base = base
            self.count = count
            self.mapped = mapped
        }

        deinit {
            guard let base else { return }
            if mapped {
                munmap(UnsafeMutableRawPointer(mutating: base), count)
            } else {
                base.deallocate()
            }
        }
    }

    private let storage: Storage
    private let base: UnsafePointer<UInt8>?
    let count: Int

    private init(_ storage: Storage) {
        self.storage = storage
        base = storage.base?.assumingMemoryBound(to: UInt8.self)
        count = storage.count
    }

    /// A copy of `bytes`.
    init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let count = bytes.count
        let memory = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Swift.max(count, 1))
        let copied: Bool? = bytes.withContiguousStorageIfAvailable { source in
            if let start = source.baseAddress { memory.baseAddress!.initialize(from: start, count: source.count) }
            return true
        }
        if copied == nil { _ = memory.initialize(from: bytes) }
        self.init(Storage(base: UnsafeRawPointer(memory.baseAddress), count: count, mapped: false))
    }

    /// The bytes of the file at `url`, mapped read-only into memory.
    init(mapping url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw Self.fileError(url, errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.fileError(url, errno) }
        let size = Int(status.st_size)
        guard size > 0 else {
            self.init([UInt8]())
            return
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0),
            address != UnsafeMutableRawPointer(bitPattern: -1)
        else { throw Self.fileError(url, errno) }
        self.init(Storage(base: UnsafeRawPointer(address), count: size, mapped: true))
    }

    private static func fileError(_ url: URL, _ code: Int32) -> Error {
        let reason = String(cString: strerror(code))
        return CocoaError(
            code == ENOENT ? .fileReadNoSuchFile : code == EACCES ? .fileReadNoPermission : .fileReadUnknown,
            userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: "\(url.path): \(reason)"])
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "byte offset \(position) outside 0..<\(count)")
        return base.unsafelyUnwrapped[position]
    }

    /// The bytes of `range` as `Data`, copied in one step.
    func data(_ range: Range<Int>) -> Data {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) outside 0..<\(count)")
        guard let base, !range.isEmpty else { return Data() }
        return Data(bytes: base + range.lowerBound, count: range.count)
    }

    /// The bytes of `range` as an array, copied in one step.
    func array(_ range: Range<Int>) -> [UInt8] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) outside 0..<\(count)")
        guard let base, !range.isEmpty else { return [] }
        return Array(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count))
    }

    /// Calls `body` with the bytes as a raw buffer, for C functions such as `memchr`.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}
