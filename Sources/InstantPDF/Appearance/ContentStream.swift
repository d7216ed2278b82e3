import Foundation
import InstantJSON

/// A content stream being written (ISO 32000-1, 8 and 9): operators with compact numbers.
struct ContentStream {
    private(set) var bytes: [UInt8] = []

    /// Appends operands and an operator, such as `10 20 m`.
    mutating func add(_ operands: [Double], _ operation: String) {
        var line = operands.map(PDFSerializer.number).joined(separator: " ")
        line += line.isEmpty ? operation : " " + operation
        bytes += Array((line + "\n").utf8)
    }

    /// Appends an operator with literal operands, such as `/GS0 gs`.
    mutating func add(_ text: String) { bytes += Array((text + "\n").utf8) }

    mutating func strokeColor(_ color: RGBColor) { add(Self.components(color), "RG") }
    mutating func fillColor(_ color: RGBColor) { add(Self.components(color), "rg") }

    static func components(_ color: RGBColor) -> [Double] {
        [color.red, color.green, color.blue].map { (Double($0) / 255 * 10_000).rounded() / 10_000 }
    }

    /// A polyline through points in user space; `closed` adds `h`.
    mutating func path(_ points: [(x: Double, y: Double)], closed: Bool = false) {
        guard let first = points.first else { return }
        add([first.x, first.y], "m")
        for point in points.dropFirst() { add([point.x, point.y], "l") }
        if closed { add("h") }
    }

    /// An ellipse inscribed in a rectangle, as four Bézier curves.
    mutating func ellipse(in rect: PDFRect) {
        let (cx, cy) = ((rect.minX + rect.maxX) / 2, (rect.minY + rect.maxY) / 2)
        let (rx, ry) = (rect.width / 2, rect.height / 2)
        let k = 0.552_284_75
        add([cx + rx, cy], "m")
        add([cx + rx, cy + k * ry, cx + k * rx, cy + ry, cx, cy + ry], "c")
        add([cx - k * rx, cy + ry, cx - rx, cy + k * ry, cx - rx, cy], "c")
        add([cx - rx, cy - k * ry, cx - k * rx, cy - ry, cx, cy - ry], "c")
        add([cx + k * rx, cy - ry, cx + rx, cy - k * ry, cx + rx, cy], "c")
        add("h")
    }

    /// Paints the current path: fill and stroke, fill only or stroke only.
    mutating func paint(fill: Bool, stroke: Bool) {
        switch (fill, stroke) {
        case (true, true): add("B")
        case (true, false): add("f")
        case (false, true): add("S")
        case (false, false): add("n")
        }
    }

    /// A string operand in WinAnsiEncoding, with `(`, `)` and `\` escaped; characters outside
    /// the encoding become `?`.
    static func literal(_ text: String) -> String {
        var output = "("
        for byte in StandardFont.winAnsiBytes(text) {
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "\\"): output += "\\" + String(UnicodeScalar(byte))
            case 0x20..<0x7F: output.append(Character(UnicodeScalar(byte)))
            default: output += String(format: "\\%03o", byte)
            }
        }
        return output + ")"
    }
}
