import Foundation
import InstantJSON

extension Drawing {
    /// Free text: background, callout line, and the text wrapped to the box with its alignment.
    mutating func freeText() {
        var box = space.userRect(annotation.bbox)
        if case .object(let callout)? = annotation["callout"] {
            let points = ["start", "knee", "end"].compactMap { callout[$0].flatMap(Self.point) }.map(user)
            if points.count >= 2 {
                content.strokeColor(annotation.fontColor ?? Self.black)
                content.add([1], "w")
                content.path(points)
                content.add("S")
            }
            if case .array(let insets)? = callout["innerRectInset"] {
                let values = insets.compactMap(\.doubleValue).map { $0.isFinite ? max($0, 0) : 0 }
                if values.count == 4 {  // left, top, right, bottom
                    box = PDFRect(
                        minX: box.minX + values[0], minY: box.minY + values[3],
                        maxX: max(box.maxX - values[2], box.minX + values[0]),
                        maxY: max(box.maxY - values[1], box.minY + values[3]))
                }
            }
        }
        if let background = annotation.backgroundColor {
            content.fillColor(background)
            content.add([box.minX, box.minY, box.width, box.height], "re")
            content.add("f")
        }
        let font = StandardFont(instantFont: annotation.font)
        let size = annotation.fontSize.map { $0.isFinite && $0 > 0 ? $0 : 12 } ?? 12
        write(
            annotation.text?.value ?? "", in: box, font: font, size: size, color: annotation.fontColor ?? Self.black,
            horizontal: annotation.horizontalAlign ?? "left", vertical: annotation.verticalAlign ?? "top")
    }

    /// A stamp: a rounded box in the stamp's color with its title (and subtitle) centered.
    mutating func stamp() {
        let stampType = annotation.stampType ?? .draft
        let color = annotation.color ?? Self.defaultColor(of: stampType)
        let title = stampType == .custom ? (annotation.title ?? "") : Self.words(stampType.rawValue).uppercased()
        let line = max(min(rect.height, rect.width) / 20, 1)
        let box = PDFRect(
            minX: rect.minX + line, minY: rect.minY + line, maxX: max(rect.maxX - line, rect.minX + line),
            maxY: max(rect.maxY - line, rect.minY + line))
        let radius = min(box.height, box.width) / 6
        content.strokeColor(color)
        content.add([line], "w")
        roundedRectangle(box, radius: radius)
        content.add("S")
        let subtitle = annotation.subtitle.flatMap { $0.isEmpty ? nil : $0 }
        let titleBox =
            subtitle == nil
            ? box : PDFRect(minX: box.minX, minY: box.minY + box.height * 0.35, maxX: box.maxX, maxY: box.maxY)
        let padding = radius
        let available = max(titleBox.width - 2 * padding, 1)
        let font = StandardFont.helveticaBold
        let unitWidth = max(font.width(of: title, size: 1), 0.001)
        let titleSize = max(min(titleBox.height * 0.6, available / unitWidth), 1)
        write(title, in: titleBox, font: font, size: titleSize, color: color, horizontal: "center", vertical: "center")
        if let subtitle {
            let subtitleBox = PDFRect(minX: box.minX, minY: box.minY, maxX: box.maxX, maxY: box.minY + box.height * 0.4)
            let subtitleSize = max(
                min(
                    subtitleBox.height * 0.55,
                    available / max(StandardFont.helvetica.width(of: subtitle, size: 1), 0.001)), 1)
            write(
                subtitle, in: subtitleBox, font: .helvetica, size: subtitleSize, color: color, horizontal: "center",
                vertical: "center")
        }
    }

    /// Standard stamps are green when they approve, red when they refuse, blue otherwise.
    static func defaultColor(of stampType: StampType) -> RGBColor {
        switch stampType {
        case .approved, .accepted, .completed, .final: RGBColor(red: 42, green: 138, blue: 55)
        case .rejected, .notApproved, .void, .expired, .notForPublicRelease, .confidential:
            RGBColor(red: 196, green: 30, blue: 30)
        default: RGBColor(red: 38, green: 70, blue: 170)
        }
    }

    /// `ForPublicRelease` → `For Public Release`.
    static func words(_ camelCase: String) -> String {
        var result = ""
        for character in camelCase {
            if character.isUppercase, !result.isEmpty { result += " " }
            result.append(character)
        }
        return result
    }

    static func point(_ value: JSONValue) -> Point? {
        guard case .array(let pair) = value, pair.count == 2, let x = pair[0].doubleValue, let y = pair[1].doubleValue,
            x.isFinite, y.isFinite
        else { return nil }
        return Point(x: x, y: y)
    }

    private mutating func roundedRectangle(_ box: PDFRect, radius r: Double) {
        let k = 0.552_284_75 * r
        content.add([box.minX + r, box.minY], "m")
        content.add([box.maxX - r, box.minY], "l")
        content.add([box.maxX - r + k, box.minY, box.maxX, box.minY + r - k, box.maxX, box.minY + r], "c")
        content.add([box.maxX, box.maxY - r], "l")
        content.add([box.maxX, box.maxY - r + k, box.maxX - r + k, box.maxY, box.maxX - r, box.maxY], "c")
        content.add([box.minX + r, box.maxY], "l")
        content.add([box.minX + r - k, box.maxY, box.minX, box.maxY - r + k, box.minX, box.maxY - r], "c")
        content.add([box.minX, box.minY + r], "l")
        content.add([box.minX, box.minY + r - k, box.minX + r - k, box.minY, box.minX + r, box.minY], "c")
        content.add("h")
    }

    /// Text in a box: lines broken at spaces to fit the width, aligned, clipped to the box.
    mutating func write(
        _ text: String, in box: PDFRect, font: StandardFont, size: Double, color: RGBColor, horizontal: String,
        vertical: String
    ) {
        guard !text.isEmpty, box.width > 0, box.height > 0 else { return }
        var fonts = resources["Font"]?.dictionaryValue ?? PDFDictionary()
        fonts[font.resourceName] = .dictionary(font.dictionary)
        resources["Font"] = .dictionary(fonts)
        let padding = min(2, box.width / 4)
        let lines = Self.wrap(text, width: box.width - 2 * padding, font: font, size: size)
        let leading = size * 1.2
        let textHeight = Double(lines.count) * leading
        let top: Double
        switch vertical {
        case "center": top = box.maxY - (box.height - textHeight) / 2
        case "bottom": top = box.minY + textHeight + padding
        default: top = box.maxY - padding
        }
        content.add("q")
        content.add([box.minX, box.minY, box.width, box.height], "re")
        content.add("W n")
        content.add("BT")
        content.add("/\(font.resourceName) \(PDFSerializer.number(size)) Tf")
        content.fillColor(color)
        for (index, line) in lines.enumerated() {
            let width = font.width(of: line, size: size)
            let x: Double
            switch horizontal {
            case "center": x = box.minX + (box.width - width) / 2
            case "right": x = box.maxX - padding - width
            default: x = box.minX + padding
            }
            // The baseline sits about 0.8 of the size below the top of its line.
            let y = top - Double(index) * leading - size * 0.8 - (leading - size) / 2
            content.add([1, 0, 0, 1, x, y], "Tm")
            content.add("\(ContentStream.literal(line)) Tj")
        }
        content.add("ET")
        content.add("Q")
    }

    /// Paragraphs broken into lines no wider than `width`; a word longer than a line stays whole.
    static func wrap(_ text: String, width: Double, font: StandardFont, size: Double) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let candidate = line.isEmpty ? String(word) : line + " " + word
                if !line.isEmpty, font.width(of: candidate, size: size) > width {
                    lines.append(line)
                    line = String(word)
                } else {
                    line = candidate
                }
            }
            lines.append(line)
        }
        return lines
    }
}
