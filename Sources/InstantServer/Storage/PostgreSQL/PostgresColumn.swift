import NIOCore
import PostgresNIO

/// The values of one column of several rows, bound as one PostgreSQL array parameter that a
/// statement turns back into rows with `unnest`, so that its SQL (and its prepared plan) does not
/// depend on the number of rows. Unlike postgres-nio's own arrays, its elements may be `NULL`.
struct PostgresColumn<Element: PostgresEncodable>: PostgresThrowingDynamicTypeEncodable {
    var values: [Element?]
    /// The type of the array (the one whose elements are `Element.psqlType`).
    let psqlType: PostgresDataType
    var psqlFormat: PostgresFormat { .binary }

    /// A column of values whose array type postgres-nio does not know (`Data` as `bytea[]`).
    init(_ values: [Element?], arrayType: PostgresDataType) {
        self.values = values
        psqlType = arrayType
    }

    /// The binary form PostgreSQL's `array_recv` reads: the number of dimensions (0 when empty),
    /// whether some element is NULL, the element type; then the length and lower bound of the one
    /// dimension, and each element with its length in bytes (-1 for NULL).
    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) throws {
        buffer.writeInteger(values.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(values.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !values.isEmpty else { return }
        buffer.writeInteger(Int32(values.count))
        buffer.writeInteger(1, as: Int32.self)
        for value in values {
            guard let value else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            try value.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex)
        }
    }
}

extension PostgresColumn where Element: PostgresArrayEncodable {
    /// A column of values of a type postgres-nio has arrays of.
    init(_ values: [Element?]) {
        self.init(values, arrayType: Element.psqlArrayType)
    }
}
