import Foundation
import Logging
import PostgresNIO

/// The primitives of one transaction of a ``PostgresBackend``, on the connection the transaction
/// holds. Each primitive is one statement (a batch of many rows is a few). ``PostgresBlobStore``
/// runs its statements through it too, outside a transaction.
struct PostgresTransaction: OptimisticTransaction {
    let connection: PostgresConnection
    let logger: Logger
    /// Told how many records the transaction writes, if the backend keeps the table's statistics.
    var recordStatistics: RecordStatistics?

    /// Runs a statement and returns its rows, mapping errors to ``StorageError`` that say what was
    /// being done.
    func rows(_ query: PostgresQuery, _ action: @autoclosure () -> String) async throws -> [PostgresRow] {
        do {
            return try await connection.query(query, logger: logger).collect()
        } catch {
            throw PostgresBackend.failure(error, while: action())
        }
    }

    /// Runs a statement for its effect.
    func execute(_ query: PostgresQuery, _ action: @autoclosure () -> String) async throws {
        _ = try await rows(query, action())
    }

    /// Runs a statement and decodes each of its rows with `decode`.
    func map<T>(
        _ query: PostgresQuery,
        _ action: @autoclosure () -> String,
        _ decode: (PostgresRow) throws -> T
    ) async throws -> [T] {
        let rows = try await rows(query, action())
        do {
            return try rows.map(decode)
        } catch {
            throw PostgresBackend.failure(error, while: action())
        }
    }

    /// Runs a statement whose rows have one column, and decodes the first row's value.
    func value<T: PostgresDecodable>(
        _ query: PostgresQuery,
        as type: T.Type,
        _ action: @autoclosure () -> String
    ) async throws -> T? {
        try await map(query, action()) { try $0.decode(T.self) }.first
    }

    /// The most rows one statement writes: 500 rows of 13 values stay well within PostgreSQL's
    /// 65,535 parameters of a statement.
    static let rowsPerStatement = 500
    /// About the most bytes of values one statement carries (16 MiB), well within PostgreSQL's
    /// 1 GiB message; larger writes are split.
    static let bytesPerStatement = 16 << 20

    /// Runs one `INSERT … VALUES (…), (…) …` per batch of rows: `statement` is the text before
    /// `VALUES`, `types` the SQL type of each value of a row (every value is cast to it, which
    /// also types the `NULL`s), `suffix` the text after the values (`ON CONFLICT …`), and `bind`
    /// appends a row's values in the order of `types`.
    ///
    /// A batch has at most ``rowsPerStatement`` rows and about ``bytesPerStatement`` of values.
    func insert<Row>(
        _ rows: [Row],
        _ statement: String,
        types: [String],
        suffix: String,
        _ action: @autoclosure () -> String,
        size: (Row) -> Int,
        bind: (Row, inout PostgresBindings) throws -> Void
    ) async throws {
        var start = rows.startIndex
        while start < rows.endIndex {
            var end = start
            var bytes = 0
            while end < rows.endIndex, end - start < Self.rowsPerStatement,
                end == start || bytes + size(rows[end]) <= Self.bytesPerStatement
            {
                bytes += size(rows[end])
                end += 1
            }
            var bindings = PostgresBindings(capacity: (end - start) * types.count)
            var tuples: [String] = []
            for row in rows[start..<end] {
                let first = bindings.count
                do {
                    try bind(row, &bindings)
                } catch {
                    throw PostgresBackend.failure(error, while: action())
                }
                let values = types.enumerated().map { "$\(first + $0.offset + 1)::\($0.element)" }
                tuples.append("(" + values.joined(separator: ", ") + ")")
            }
            let sql = "\(statement) VALUES \(tuples.joined(separator: ", ")) \(suffix)"
            try await execute(PostgresQuery(unsafeSQL: sql, binds: bindings), action())
            start = end
        }
    }
}
