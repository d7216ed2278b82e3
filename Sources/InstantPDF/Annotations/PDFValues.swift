import Foundation
import InstantJSON

/// Conversions of PDF values to their Instant JSON form.
enum PDFValues {
    /// `/C`, `/IC` and similar color arrays: gray, RGB or CMYK components between 0 and 1.
    static func color(_ object: PDFObject?, resolve: (PDFObject) -> PDFObject) -> RGBColor? {
        guard let object, let components = resolve(object).arrayValue?.compactMap({ resolve($0).doubleValue }) else {
            return nil
        }
        switch components.count {
        case 1: return RGBColor(normalizedRed: components[0], green: components[0], blue: components[0])
        case 3: return RGBColor(normalizedRed: components[0], green: components[1], blue: components[2])
        case 4:
            let (c, m, y, k) = (components[0], components[1], components[2], components[3])
            return RGBColor(normalizedRed: (1 - c) * (1 - k), green: (1 - m) * (1 - k), blue: (1 - y) * (1 - k))
        default: return nil
        }
    }

    /// A PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, every part after the year optional) as ISO 8601.
    static func date(_ text: String?) -> String? {
        guard var text else { return nil }
        if text.hasPrefix("D:") { text.removeFirst(2) }
        let characters = Array(text)
        func digits(_ start: Int, _ count: Int, default value: Int) -> Int? {
            guard start + count <= characters.count else { return value }
            let slice = String(characters[start..<start + count])
            return Int(slice)
        }
        guard characters.count >= 4, let year = Int(String(characters[0..<4])),
            let month = digits(4, 2, default: 1), let day = digits(6, 2, default: 1),
            let hour = digits(8, 2, default: 0),
            let minute = digits(10, 2, default: 0), let second = digits(12, 2, default: 0),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var zone = "Z"
        if characters.count > 14 {
            let sign = characters[14]
            if sign == "+" || sign == "-" {
                let hours = digits(15, 2, default: 0) ?? 0
                let minutes = characters.count >= 20 ? (digits(18, 2, default: 0) ?? 0) : 0
                zone = String(format: "%@%02d:%02d", String(sign), hours, minutes)
            }
        }
        let iso = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, hour, minute, second) + zone
        return InstantDate.parse(iso) != nil ? iso : nil
    }

    /// `/F` bits as Instant JSON flags (ISO 32000-1, 12.5.3). A missing Print bit becomes `noPrint`.
    static func flags(_ value: Int) -> [AnnotationFlag] {
        var flags: [AnnotationFlag] = []
        if value & (1 << 0) != 0 { flags.append(.invisible) }
        if value & (1 << 1) != 0 { flags.append(.hidden) }
        if value & (1 << 2) == 0 { flags.append(.noPrint) }
        if value & (1 << 3) != 0 { flags.append(.noZoom) }
        if value & (1 << 4) != 0 { flags.append(.noRotate) }
        if value & (1 << 5) != 0 { flags.append(.noView) }
        if value & (1 << 6) != 0 { flags.append(.readOnly) }
        if value & (1 << 7) != 0 { flags.append(.locked) }
        if value & (1 << 8) != 0 { flags.append(.toggleNoView) }
        if value & (1 << 9) != 0 { flags.append(.lockedContents) }
        return flags
    }

    /// `/LE` names as line caps.
    static func lineCap(_ name: String?) -> LineCap? {
        switch name {
        case "Square": return .square
        case "Circle": return .circle
        case "Diamond": return .diamond
        case "OpenArrow": return .openArrow
        case "ClosedArrow": return .closedArrow
        case "Butt": return .butt
        case "ROpenArrow": return .reverseOpenArrow
        case "RClosedArrow": return .reverseClosedArrow
        case "Slash": return .slash
        default: return nil
        }
    }

    /// The font size and color of a default appearance string such as `/Helv 12 Tf 0 0 1 rg`.
    static func defaultAppearance(_ text: String?) -> (fontSize: Double?, font: String?, color: RGBColor?) {
        guard let text else { return (nil, nil, nil) }
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }).map(
            String.init)
        var fontSize: Double?
        var font: String?
        var color: RGBColor?
        for (index, token) in tokens.enumerated() {
            switch token {
            case "Tf" where index >= 2:
                fontSize = Double(tokens[index - 1])
                font = tokens[index - 2].hasPrefix("/") ? String(tokens[index - 2].dropFirst()) : nil
            case "rg" where index >= 3:
                if let r = Double(tokens[index - 3]), let g = Double(tokens[index - 2]),
                    let b = Double(tokens[index - 1])
                {
                    color = RGBColor(normalizedRed: r, green: g, blue: b)
                }
            case "g" where index >= 1:
                if let gray = Double(tokens[index - 1]) {
                    color = RGBColor(normalizedRed: gray, green: gray, blue: gray)
                }
            default: break
            }
        }
        return (fontSize, font, color)
    }
}

/// Conversion from PDF user space (origin bottom left, y up) to the page space of Instant JSON
/// (origin at the top left of the crop box, y down). Rotation is not applied.
struct PageSpace {
    var cropBox: PDFRect

    /// Coordinates are rounded to 1/10,000 of a point, which hides the binary noise of the
    /// subtraction (`841.89 - 785.2`) and is far below what any device can show.
    static func rounded(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }

    func point(_ x: Double, _ y: Double) -> Point {
        Point(x: Self.rounded(x - cropBox.minX), y: Self.rounded(cropBox.maxY - y))
    }

    func rect(_ rect: PDFRect) -> Rect {
        Rect(
            left: Self.rounded(rect.minX - cropBox.minX), top: Self.rounded(cropBox.maxY - rect.maxY),
            width: Self.rounded(rect.width), height: Self.rounded(rect.height))
    }

    /// The bounding rectangles of `/QuadPoints` (8 numbers per quadrilateral).
    func rects(quadPoints: [Double]) -> [Rect] {
        stride(from: 0, to: quadPoints.count - 7, by: 8).map { start in
            let xs = [quadPoints[start], quadPoints[start + 2], quadPoints[start + 4], quadPoints[start + 6]]
            let ys = [quadPoints[start + 1], quadPoints[start + 3], quadPoints[start + 5], quadPoints[start + 7]]
            return rect(PDFRect(minX: xs.min()!, minY: ys.min()!, maxX: xs.max()!, maxY: ys.max()!))
        }
    }

    /// Points from a flat list `[x1 y1 x2 y2 …]`.
    func points(_ flat: [Double]) -> [Point] {
        stride(from: 0, to: flat.count - 1, by: 2).map { point(flat[$0], flat[$0 + 1]) }
    }

    /// The inverse of ``point(_:_:)``: an Instant JSON page-space point in PDF user space.
    func userPoint(_ point: Point) -> (x: Double, y: Double) {
        (point.x + cropBox.minX, cropBox.maxY - point.y)
    }

    /// The inverse of ``rect(_:)``: an Instant JSON page-space rectangle in PDF user space.
    func userRect(_ rect: Rect) -> PDFRect {
        PDFRect(
            minX: rect.left + cropBox.minX, minY: cropBox.maxY - rect.top - rect.height,
            maxX: rect.left + rect.width + cropBox.minX, maxY: cropBox.maxY - rect.top)
    }
}
