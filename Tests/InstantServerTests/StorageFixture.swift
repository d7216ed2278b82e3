import Foundation
import Testing

@testable import InstantServer

/// The storage backends every storage test runs against.
enum StorageKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite

    var testDescription: String { rawValue }
}

/// A fresh, empty storage of one backend for one test, which can be opened again over the same
/// data (as a restarted server would) and removed at the end.
final class StorageFixture: Sendable {
    let kind: StorageKind
    let storage: InstantStorage
    private let directory: TemporaryDirectory

    init(_ kind: StorageKind) async throws {
        self.kind = kind
        directory = try TemporaryDirectory()
        storage = try Self.open(kind, directory: directory)
    }

    private static func open(_ kind: StorageKind, directory: TemporaryDirectory) throws -> InstantStorage {
        switch kind {
        case .sqlite: try InstantStorage.sqlite(directory: directory.url)
        }
    }

    /// A second storage over the same data.
    func reopened() async throws -> InstantStorage {
        try Self.open(kind, directory: directory)
    }

    func remove() {
        directory.remove()
    }
}
