import Crypto
import Foundation
import NIOCore

/// The web viewer's own files (HTML, JavaScript modules, CSS), shipped as resources of this module
/// and held in memory: they are small and never change while the server runs.
struct ViewerAssets: Sendable {
    /// One file, ready to answer.
    struct File: Sendable {
        let body: ByteBuffer
        let contentType: String
        /// A strong validator: the first 16 bytes of the SHA-256 of the bytes, in hex.
        let etag: String
    }

    /// The files by name (`viewer.js`), or empty when they were not found.
    let files: [String: File]
    /// The directories the files were looked for in, when they were not found.
    let searched: [String]

    /// The name of this module's resource bundle, as SwiftPM names it (package, then target).
    static let bundleName = "OpenInstant_InstantServer"
    /// The folder of the viewer's files inside the resource bundle.
    static let folder = "Assets"

    /// The directories where the resource bundle may be: beside the executable (`swift run`, an
    /// installed binary with its `.resources` directory, the test runner), in either the Linux or
    /// the Apple layout.
    static func candidateDirectories() -> [URL] {
        var bases = [Bundle.main.bundleURL]
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        bases.append(executable.deletingLastPathComponent())
        var candidates: [URL] = []
        for base in bases {
            candidates.append(base.appendingPathComponent("\(bundleName).resources").appendingPathComponent(folder))
            candidates.append(
                base.appendingPathComponent("\(bundleName).bundle/Contents/Resources").appendingPathComponent(folder))
            candidates.append(base.appendingPathComponent("\(bundleName).bundle").appendingPathComponent(folder))
        }
        return candidates
    }

    /// The files of the first candidate directory that has them.
    static func load() -> ViewerAssets {
        let candidates = candidateDirectories()
        for directory in candidates {
            if let files = files(in: directory), !files.isEmpty {
                return ViewerAssets(files: files, searched: [])
            }
        }
        return ViewerAssets(files: [:], searched: candidates.map(\.path))
    }

    /// The content type of each extension the viewer ships.
    static let contentTypes = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
    ]

    /// Whether a name is one the viewer's files may have: lowercase letters, digits and dashes,
    /// then one of the known extensions. Nothing else is ever looked up.
    static func isAssetName(_ name: some StringProtocol) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, contentTypes[String(parts[1])] != nil else { return false }
        return parts[0].utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
    }

    /// The files of a directory whose names pass ``isAssetName(_:)``, or `nil` if it cannot be read.
    static func files(in directory: URL) -> [String: File]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return nil }
        var files: [String: File] = [:]
        for name in names where isAssetName(name) {
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)),
                let type = contentTypes[String(name.split(separator: ".")[1])]
            else { continue }
            let digest = SHA256.hash(data: data).prefix(16).map { String(format: "%02x", $0) }.joined()
            files[name] = File(body: ByteBuffer(bytes: data), contentType: type, etag: "\"\(digest)\"")
        }
        return files
    }
}
