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
    /// The parameters of one row, when the statement is one of an ``Insert``'s; errors name the row
    /// and the column of a parameter then.
    private let columnsPerRow: Int?

    /// A writer of rows with the cached statement of `sql`, whose rows have `columnsPerRow`
    /// parameters each when it is one of an ``Insert``'s.
    init(_ database: Database, sql: String, columnsPerRow: Int? = nil) throws {
        self.statement = try database.cachedStatement(sql: sql)
        self.database = database
        self.columnsPerRow = columnsPerRow
    }

    /// Binds the statement's values with `bind`, which must bind every parameter, then runs the
    /// statement once; errors count the statement's rows from `firstRow` (the place of its first
    /// row among all the rows written).
    func write(firstRow: Int = 1, _ bind: (inout Values) -> Void) throws {
        let handle = statement.sqliteStatement
        // Resetting reports the last step's failure again, which that step already threw.
        _ = sqlite3_reset(handle)
        var values = Values(handle: handle)
        bind(&values)
        // A value SQLite refused (over its size limit) would leave the value of the statement's
        // previous run bound.
        if let (code, parameter) = values.failure {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: "\(String(cString: sqlite3_errstr(code))) (\(place(of: parameter, firstRow: firstRow)))",
                sql: statement.sql)
        }
        // So would a parameter left out, and in a statement of several rows the values after it
        // would go to the columns before theirs.
        let expected = sqlite3_bind_parameter_count(handle)
        guard values.count == expected else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE,
                message: "\(values.count) of the statement's \(expected) parameters were bound", sql: statement.sql)
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: database.lastErrorMessage, sql: statement.sql)
        }
    }

    /// Where a parameter (from 1) is, for an error: for an ``Insert``'s statement, its column and
    /// its row among all the rows written (the statement's first being `firstRow`).
    private func place(of parameter: Int32, firstRow: Int) -> String {
        guard let columnsPerRow else { return "parameter \(parameter)" }
        let index = Int(parameter) - 1
        return "column \(index % columnsPerRow + 1) of row \(firstRow + index / columnsPerRow) of the rows written"
    }

    /// An insert that takes several rows a statement: the SQL of its statements, made once.
    struct Insert: Sendable {
        /// The parameters of one row.
        let columns: Int
        /// The SQL for each number of rows a statement takes, largest first; the last is for 1 row,
        /// so that every number of rows is written.
        fileprivate let statements: [(size: Int, sql: String)]

        /// The statements of `head` (the statement up to `VALUES`) followed by the parameters of
        /// `columns` columns a row, for 32, 8 and 1 rows.
        init(_ head: String, columns: Int) {
            // 32 rows of up to 31 columns stay under 999 parameters, the smallest limit SQLite has
            // had (32,766 since 3.32).
            precondition(columns > 0 && columns * 32 < 1_000, "\(columns) columns a row are too many for 32 rows")
            self.columns = columns
            let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
            statements = [32, 8, 1].map { size in
                (size, head + " " + Array(repeating: row, count: size).joined(separator: ", "))
            }
        }
    }

    /// Writes `rows` with the cached statements of `insert`, as many of the larger as fit, in order;
    /// `bind` appends the values of one row.
    ///
    /// One statement a row cost SQLite its statement's opening and closing for every row (ending
    /// it, with the statement journal an `OR REPLACE` opens, was a tenth of the insert's samples,
    /// closing its cursors a twentieth). With statements of up to 32 rows, writing a group's records
    /// took 35% of the writer thread's samples instead of 50%, and the node 1.7 µs less processor
    /// time a change (the 100-change throughput benchmark, docs/BENCHMARKS.md). Of two rows of one
    /// key the later is the one kept, as with one statement a row.
    static func insert<Row>(
        _ rows: [Row], _ database: Database, with insert: Insert, bind: (inout Values, Row) -> Void
    ) throws {
        var rest = rows[...]
        for (size, sql) in insert.statements {
            let count = rest.count / size
            guard count > 0 else { continue }
            let writer = try SQLiteRowWriter(database, sql: sql, columnsPerRow: insert.columns)
            for _ in 0..<count {
                try writer.write(firstRow: rest.startIndex + 1) { values in
                    for row in rest.prefix(size) { bind(&values, row) }
                }
                rest = rest.dropFirst(size)
            }
        }
    }

    /// The values of a statement's rows, bound in the order of its parameters. SQLite copies
    /// strings and blobs when they are bound, so they need not outlive the call.
    struct Values {
        fileprivate let handle: SQLiteStatement
        private var index: Int32 = 1
        /// The code of the first value SQLite refused, and its parameter.
        fileprivate private(set) var failure: (code: Int32, parameter: Int32)?

        /// How many values were bound.
        fileprivate var count: Int32 { index - 1 }

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
