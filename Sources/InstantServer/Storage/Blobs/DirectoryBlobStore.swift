import Foundation

/// Blobs as files in one directory, named `<sha256>.pdf`: the embedded default for PDFs.
///
/// A blob is written to a temporary file, flushed to disk and renamed into place, so a reader never
/// sees a partial file and a crash leaves at most a stray temporary file.
public struct DirectoryBlobStore: BlobStore {
    /// The directory of the files.
    public let directory: URL

    /// Uses (creating if needed) a directory of blob files.
    /// - Throws: ``StorageError/Code/backendFailure`` when the directory cannot be created.
    public init(directory: URL) throws {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError(
                .backendFailure, "Cannot create the PDF directory \(directory.path): \(error). Check its permissions.")
        }
    }

    func url(_ sha256: String) throws -> URL {
        guard ContentKey.isValid(sha256) else {
            throw StorageError(.backendFailure, "'\(sha256)' is not a SHA-256 in lowercase hex.")
        }
        return directory.appendingPathComponent("\(sha256).pdf")
    }

    public func put(_ data: Data, sha256: String) async throws -> Bool {
        let url = try url(sha256)
        if FileManager.default.fileExists(atPath: url.path) { return false }
        let temporary = directory.appendingPathComponent(".\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary)
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.synchronize()
            try handle.close()
            if rename(temporary.path, url.path) != 0 {
                throw StorageError(.backendFailure, "Cannot move the PDF into place at \(url.path) (errno \(errno)).")
            }
            return true
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? StorageError { throw error }
            throw StorageError(.backendFailure, "Cannot write the PDF file \(url.path): \(error). Check free space.")
        }
    }

    public func size(sha256: String) async throws -> Int? {
        let url = try url(sha256)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        return (attributes[.size] as? NSNumber)?.intValue
    }

    public func read(sha256: String, range: Range<Int>) async throws -> Data {
        let url = try url(sha256)
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(max(0, range.lowerBound)))
            return try handle.read(upToCount: range.count) ?? Data()
        } catch {
            throw StorageError(.backendFailure, "Cannot read the PDF file \(url.path): \(error)")
        }
    }

    public func delete(sha256: String) async throws {
        let url = try url(sha256)
        do {
            try FileManager.default.removeItem(at: url)
        } catch CocoaError.fileNoSuchFile {
            return
        } catch {
            throw StorageError(.backendFailure, "Cannot remove the PDF file \(url.path): \(error)")
        }
    }
}
