/// A rectangle of the format, in page points with the origin at the top left of the page:
/// `[left, top, width, height]`.
public struct Rect: Hashable, Sendable {
    public var left: Double
    public var top: Double
    public var width: Double
    public var height: Double

    public init(left: Double, top: Double, width: Double, height: Double) {
        self.left = left
        self.top = top
        self.width = width
        self.height = height
    }

    /// Reads `[left, top, width, height]`; `nil` unless it is an array of exactly 4 numbers.
    public init?(json: JSONValue) {
        guard let numbers = json.arrayValue?.compactMap(\.doubleValue), numbers.count == 4,
            json.arrayValue?.count == 4
        else { return nil }
        self.init(left: numbers[0], top: numbers[1], width: numbers[2], height: numbers[3])
    }

    public var json: JSONValue { .array([.number(left), .number(top), .number(width), .number(height)]) }
}

/// A point of the format, in page points with the origin at the top left of the page: `[x, y]`.
public struct Point: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// Reads `[x, y]`; `nil` unless it is an array of exactly 2 numbers.
    public init?(json: JSONValue) {
        guard let elements = json.arrayValue, elements.count == 2, let x = elements[0].doubleValue,
            let y = elements[1].doubleValue
        else { return nil }
        self.init(x: x, y: y)
    }

    public var json: JSONValue { .array([.number(x), .number(y)]) }
}
