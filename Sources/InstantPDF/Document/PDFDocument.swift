import Foundation
import InstantJSON

/// An open PDF file: its objects, pages and identity.
///
/// Opening reads the cross-reference sections (tables, streams, hybrid files, chains of incremental
/// updates); when they are missing or wrong, the reader rebuilds them by scanning the file and
/// records a warning. Objects are read lazily and cached. Safe to use from several tasks.
public final class PDFDocument: @unchecked Sendable {
    /// Reads the file's objects; its table and security handler are set once, while opening.
    let reader: PDFDocumentReader
    private let lock = NSLock()
    /// Whether the cross-reference table was rebuilt by scanning (the file's own is damaged).
    let crossReferenceWasRebuilt: Bool

    /// ``originalRecords()``, read once.
    private var cachedOriginals: InstantDocumentJSON?
    private let cacheLock = NSLock()

    /// Problems worked around while opening (such as a rebuilt cross-reference table) and, once
    /// objects have been read, objects that were not where the cross-reference table said and
    /// were found by scanning the file.
    public var warnings: [String] {
        lock.lock()
        defer { lock.unlock() }
        return openingWarnings
            + reader.recoveredObjects.sorted().map {
                "object \($0) was not at its cross-reference offset; it was found by scanning the file"
            }
    }
    private let openingWarnings: [String]
    /// The trailer dictionary (for files with cross-reference streams, the stream's dictionary).
    public let trailer: PDFDictionary
    /// The pages, in order.
    public let pages: [PDFPage]

    /// Opens a PDF from its bytes; encrypted files (standard security handler: RC4, AES-128,
    /// AES-256) open with the empty password or the given user or owner password.
    ///
    /// - Parameter limits: what the document may decode over its whole life (see ``PDFLimits``).
    /// - Throws: ``PDFError`` with code ``PDFError/Code/notAPDF`` for bytes that are not a PDF,
    ///   ``PDFError/Code/damaged`` when no document catalog can be found even after recovery, and
    ///   ``PDFError/Code/passwordRequired`` for an encrypted file whose user password is not empty
    ///   when `password` is neither its user nor its owner password,
    ///   ``PDFError/Code/unsupportedEncryption`` for security handlers other than the standard one,
    ///   and ``PDFError/Code/limitExceeded`` when opening would decode more than `limits` allow.
    public convenience init(data: Data, password: String? = nil, limits: PDFLimits = .default) throws(PDFError) {
        try self.init(bytes: PDFBytes(data), password: password, limits: limits)
    }

    init(bytes: PDFBytes, password: String?, limits: PDFLimits) throws(PDFError) {
        let reader = PDFDocumentReader(bytes: bytes, budget: DecodeBudget(limits: limits))
        self.reader = reader
        guard Self.findHeader(bytes) != nil || bytes.count > 0 else {
            throw PDFError(.notAPDF, "the file is empty")
        }
        var warnings: [String] = []
        var rebuilt = false
        do throws(PDFError) {
            reader.table = try reader.readCrossReferenceChain()
            if reader.resolve(reader.table.trailer["Root"] ?? .null).dictionaryValue == nil {
                throw PDFError(.damaged, "the trailer has no document catalog (/Root)")
            }
        } catch {
            // A bomb is not damage: scanning the file for its objects would decode it again.
            try reader.budget.check()
            guard Self.findHeader(bytes) != nil else {
                throw PDFError(.notAPDF, "the file does not start with a %PDF- header and has no PDF objects")
            }
            warnings.append(
                "the cross-reference table is damaged (\(error.message)); it was rebuilt by scanning the file")
            reader.table = try reader.rebuildCrossReference()
            rebuilt = true
        }
        crossReferenceWasRebuilt = rebuilt
        var trailer = reader.table.trailer
        if reader.resolve(trailer["Root"] ?? .null).dictionaryValue == nil {
            // Last resort: a catalog object anywhere in the file.
            let numbers = reader.table.entries.keys.sorted()
            if let catalog = numbers.first(where: {
                reader.object(PDFReference(number: $0, generation: 0)).dictionaryValue?.type == "Catalog"
            }) {
                trailer["Root"] = .reference(PDFReference(number: catalog, generation: 0))
                warnings.append("the trailer has no /Root; the document catalog was found by scanning")
            } else {
                throw PDFError(.damaged, "no document catalog was found, even after scanning the whole file")
            }
        }
        if let encryptEntry = trailer["Encrypt"], let encrypt = reader.resolve(encryptEntry).dictionaryValue {
            let ids = reader.resolve(trailer["ID"] ?? .null).arrayValue ?? []
            let firstID = ids.first.flatMap { reader.resolve($0).stringData }.map { [UInt8]($0) } ?? []
            reader.security = try StandardSecurityHandler(
                encrypt: encrypt, firstID: firstID, password: password ?? "", resolve: reader.resolve)
            reader.encryptObjectNumber = encryptEntry.referenceValue?.number
            reader.forgetCachedObjects()
        }
        self.trailer = trailer
        guard let catalog = reader.resolve(trailer["Root"] ?? .null).dictionaryValue else {
            throw PDFError(.damaged, "the document catalog could not be read (or decrypted)")
        }
        self.pages = PDFPage.collect(in: reader, catalog: catalog, warnings: &warnings)
        self.openingWarnings = warnings
        // Streams that went over the budget read as missing objects; opening reports the limit.
        try reader.budget.check()
    }

    /// Opens the PDF file at a path. The file is mapped into memory, not read: opening costs what
    /// the reader looks at (cross-reference, catalog, page tree), whatever the size of the file.
    /// The file must not be truncated or rewritten while the document is in use.
    public convenience init(contentsOf url: URL, password: String? = nil, limits: PDFLimits = .default) throws {
        try self.init(bytes: PDFBytes(mapping: url), password: password, limits: limits)
    }

    /// What the document may decode over its whole life.
    public var limits: PDFLimits { reader.budget.limits }

    /// The bytes the document has decoded so far (stream data, parsed objects of object streams,
    /// image samples), as counted against ``PDFLimits/maxDecodedBytes``.
    public var decodedByteCount: Int { reader.budget.decodedBytes }

    /// The first of its ``limits`` the document ran into, or `nil`.
    ///
    /// Once a limit is exceeded, every stream the document has not decoded yet reads as missing,
    /// so what the non-throwing readers (such as ``originalRecords()``) return afterwards is
    /// incomplete: check this after them. The throwing operations throw it themselves.
    public var exceededLimit: PDFError? { reader.budget.exceeded }

    static func findHeader(_ bytes: PDFBytes) -> Int? {
        let header = Array("%PDF-".utf8)
        let limit = min(bytes.count - header.count, 1024)
        guard limit >= 0 else { return nil }
        for index in 0...limit where bytes[index..<index + header.count].elementsEqual(header) { return index }
        return nil
    }

    /// The result of `read` the first time, afterwards the same value without reading again.
    func cachedOriginalRecords(_ read: () -> InstantDocumentJSON) -> InstantDocumentJSON {
        cacheLock.lock()
        let cached = cachedOriginals
        cacheLock.unlock()
        if let cached { return cached }
        let records = read()
        cacheLock.lock()
        cachedOriginals = records
        cacheLock.unlock()
        return records
    }

    /// The number of pages.
    public var pageCount: Int { pages.count }

    /// The object a reference points to (`null` when it does not exist).
    public func object(_ reference: PDFReference) -> PDFObject {
        lock.lock()
        defer { lock.unlock() }
        return reader.object(reference)
    }

    /// Follows references until a direct object.
    public func resolve(_ object: PDFObject) -> PDFObject {
        lock.lock()
        defer { lock.unlock() }
        return reader.resolve(object)
    }

    /// The decoded bytes of a stream.
    public func decodedData(of stream: PDFStream) throws(PDFError) -> Data {
        lock.lock()
        defer { lock.unlock() }
        return Data(try StreamFilters.decode(stream, resolve: reader.resolve, budget: reader.budget))
    }

    /// The document catalog.
    public var catalog: PDFDictionary { resolve(trailer["Root"] ?? .null).dictionaryValue ?? PDFDictionary() }

    /// The identity of the file from the trailer's `/ID`, or `nil` if it has none.
    public var pdfId: PDFId? {
        guard let ids = resolve(trailer["ID"] ?? .null).arrayValue, ids.count >= 2,
            let permanent = resolve(ids[0]).stringData, let changing = resolve(ids[1]).stringData
        else { return nil }
        return PDFId(permanent: permanent, changing: changing)
    }

    /// The `/Title` of the document information dictionary.
    public var title: String? {
        guard let info = resolve(trailer["Info"] ?? .null).dictionaryValue else { return nil }
        return resolve(info["Title"] ?? .null).textValue
    }
}
