import Foundation
import GRDB
import GRDBSQLite

/// Runs a prepared statement with the values of its rows (one, or several for an insert of many
/// rows) bound straight to SQLite: the statements that write a group's records, its client push
/// ids and its revision.
///
/// GRDB's `execute(arguments:)` wraps each value of each row in an existential and an array of
/// database values before it binds them; for a 100-change push's rows that cost more than the
/// SQLite insert itself (a profile of the 100-change throughput benchmark). The statement stays
/// GRDB's cached statement: only its execution skips GRDB, inside the writer's transaction.
struct SQLiteRowWriter {
    private let statement: Statement
    private let database: Database

    /// A writer of rows with the cached statement of `sql`.
    init(_ database: Database, sql: String) throws {
        self.statement = try database.cachedStatement(sql: sql)
        self.database = database
    }

    /// Binds a row's values with `bind`, then runs the statement once.
    func write(_ bind: (inout Values) -> Void) throws {
        let handle = statement.sqliteStatement
        // Resetting reports the last step's failure again, which that step already threw.
        _ = sqlite3_reset(handle)
        var values = Values(handle: handle)
        bind(&values)
        // A value SQLite refused (over its size limit) would leave the last row's value bound.
        if let (code, parameter) = values.failure {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: "\(String(cString: sqlite3_errstr(code))) (parameter \(parameter))", sql: statement.sql)
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: database.lastErrorMessage, sql: statement.sql)
        }
    }

    /// Writes `rows` with the cached statements of an insert that takes several rows at once: `head`
    /// (the statement up to `VALUES`) followed by `columns` parameters a row, for 32, 8 or 1 rows,
    /// as many of the larger as fit. `bind` appends the values of one row.
    ///
    /// One statement a row cost SQLite its statement's opening and closing (cursors, the statement
    /// journal an `OR REPLACE` needs, the foreign key checks' end) for every row. With statements of
    /// up to 32 rows, writing a group's records took 35% of the writer thread's samples instead of
    /// 50%, and the node 1.7 µs less processor time a change (the 100-change throughput benchmark,
    /// docs/BENCHMARKS.md). Rows are written in order, so that of two rows of one key the later is
    /// the one kept, as with one statement a row.
    static func insert<Row>(
        _ rows: some Collection<Row>, _ database: Database, head: String, columns: Int,
        bind: (inout Values, Row) -> Void
    ) throws {
        var rest = rows[...]
        for size in rowsPerInsert {
            let statements = rest.count / size
            guard statements > 0 else { continue }
            let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
            let writer = try SQLiteRowWriter(
                database, sql: head + " " + Array(repeating: row, count: size).joined(separator: ", "))
            for _ in 0..<statements {
                try writer.write { values in
                    for row in rest.prefix(size) { bind(&values, row) }
                }
                rest = rest.dropFirst(size)
            }
        }
    }

    /// The numbers of rows of the statements of ``insert(_:_:head:columns:bind:)``, largest first;
    /// the last is 1, so that every number of rows is written.
    private static let rowsPerInsert = [32, 8, 1]

    /// The values of one row, bound in the order of the statement's parameters. SQLite copies
    /// strings and blobs when they are bound, so they need not outlive the call.
    struct Values {
        fileprivate let handle: SQLiteStatement
        private var index: Int32 = 1
        /// The code of the first value SQLite refused, and its parameter.
        fileprivate private(set) var failure: (code: Int32, parameter: Int32)?

        fileprivate init(handle: SQLiteStatement) {
            self.handle = handle
        }

        mutating func append(_ value: String?) {
            defer { index += 1 }
            guard var value else { return bindNull() }
            value.withUTF8 { bytes in
                check(
                    sqlite3_bind_text64(
                        handle, index, bytes.baseAddress, sqlite3_uint64(bytes.count), Self.copied, UInt8(SQLITE_UTF8)))
            }
        }

        mutating func append(_ value: Data) {
            defer { index += 1 }
            value.withUnsafeBytes { bytes in
                if let address = bytes.baseAddress {
                    check(sqlite3_bind_blob64(handle, index, address, sqlite3_uint64(bytes.count), Self.copied))
                } else {
                    // An empty blob, not NULL.
                    check(sqlite3_bind_zeroblob(handle, index, 0))
                }
            }
        }

        mutating func append(_ value: Int64?) {
            defer { index += 1 }
            guard let value else { return bindNull() }
            check(sqlite3_bind_int64(handle, index, value))
        }

        mutating func append(_ value: Int?) {
            append(value.map(Int64.init))
        }

        mutating func append(_ value: Bool) {
            append(Int64(value ? 1 : 0))
        }

        mutating func append(_ value: Double) {
            defer { index += 1 }
            check(sqlite3_bind_double(handle, index, value))
        }

        private mutating func bindNull() {
            check(sqlite3_bind_null(handle, index))
        }

        private mutating func check(_ code: Int32) {
            if code != SQLITE_OK, failure == nil { failure = (code, index) }
        }

        /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the bind returns.
        private static let copied = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }
}
