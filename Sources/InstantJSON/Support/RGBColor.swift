/// A color of the format: `#RRGGBB`.
public struct RGBColor: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Components between 0 and 1 (values outside are clamped), rounded to the nearest byte.
    public init(normalizedRed red: Double, green: Double, blue: Double) {
        func byte(_ component: Double) -> UInt8 { UInt8((min(max(component, 0), 1) * 255).rounded()) }
        self.init(red: byte(red), green: byte(green), blue: byte(blue))
    }

    /// Parses `#RRGGBB` (either case); `nil` for anything else.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 7, utf8[0] == UInt8(ascii: "#") else { return nil }
        var components: [UInt8] = []
        for offset in stride(from: 1, to: 7, by: 2) {
            guard let high = Self.hexDigit(utf8[offset]), let low = Self.hexDigit(utf8[offset + 1]) else { return nil }
            components.append(high << 4 | low)
        }
        self.init(red: components[0], green: components[1], blue: components[2])
    }

    /// `#RRGGBB` in upper case.
    public var hex: String {
        let digits = Array("0123456789ABCDEF")
        var result = "#"
        for component in [red, green, blue] {
            result.append(digits[Int(component >> 4)])
            result.append(digits[Int(component & 0xF)])
        }
        return result
    }

    public var description: String { hex }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
