import Foundation
import InstantJSON

/// Draws the normal appearance of Instant JSON annotations, so that viewers which do not draw
/// annotations themselves (and printing, and flattening) show them as Instant clients do.
enum AppearanceBuilder {
    /// The appearance of `annotation` in `rect` (its `/Rect`, PDF user space), or `nil` for types
    /// that have none (links, widgets, unknown subtypes).
    ///
    /// - Parameters:
    ///   - attachments: the bytes of image attachments by id, for image annotations.
    ///   - budget: what decoding an image attachment may take.
    /// - Throws: ``PDFError`` with code ``PDFError/Code/limitExceeded`` for an image attachment
    ///   beyond the limits of `budget`.
    static func appearance(
        for annotation: Annotation, space: PageSpace, rect: PDFRect, attachments: [String: Data],
        budget: DecodeBudget
    ) throws(PDFError) -> AnnotationAppearance? {
        var drawing = Drawing(annotation: annotation, space: space, rect: rect)
        switch annotation.type {
        case .ink: drawing.ink()
        case .line, .polyline: drawing.openShape()
        case .rectangle, .ellipse, .polygon: drawing.closedShape()
        case .highlight, .underline, .strikeOut, .squiggly: drawing.textMarkup()
        case .redaction: drawing.redaction()
        case .note: drawing.noteIcon()
        case .text: drawing.freeText()
        case .stamp: drawing.stamp()
        case .image: try drawing.image(attachments[annotation.imageAttachmentId ?? ""], budget: budget)
        default: return nil
        }
        return AnnotationAppearance(
            boundingBox: rect, content: drawing.content.bytes, resources: drawing.resources)
    }
}

/// One appearance being drawn: its content, its resources and the annotation's values.
struct Drawing {
    let annotation: Annotation
    let space: PageSpace
    let rect: PDFRect
    var content = ContentStream()
    var resources = PDFDictionary()

    init(annotation: Annotation, space: PageSpace, rect: PDFRect) {
        self.annotation = annotation
        self.space = space
        self.rect = rect
        let multiply = annotation.type == .highlight || annotation.blendMode == .multiply
        let opacity = annotation.opacity.map { $0.isFinite ? min(max($0, 0), 1) : 1 } ?? 1
        if opacity < 1 || multiply { addGraphicsState(opacity: opacity, multiply: multiply) }
    }

    /// Opacity and blend mode through an ExtGState (`/GS0 gs`).
    private mutating func addGraphicsState(opacity: Double, multiply: Bool) {
        var state = PDFDictionary(["Type": .name("ExtGState"), "CA": .number(opacity), "ca": .number(opacity)])
        if multiply { state["BM"] = .name("Multiply") }
        resources["ExtGState"] = .dictionary(PDFDictionary(["GS0": .dictionary(state)]))
        content.add("/GS0 gs")
    }

    func user(_ point: Point) -> (x: Double, y: Double) {
        let user = space.userPoint(point)
        return (user.x.isFinite ? user.x : 0, user.y.isFinite ? user.y : 0)
    }

    static let black = RGBColor(red: 0, green: 0, blue: 0)

    // MARK: - Shapes

    mutating func ink() {
        let width = max(annotation.lineWidth ?? 1, 0)
        content.strokeColor(annotation.strokeColor ?? Self.black)
        content.add([width], "w")
        content.add("1 J 1 j")
        for stroke in annotation.lines?.points ?? [] where !stroke.isEmpty {
            let points = stroke.map(user)
            content.path(points.count == 1 ? [points[0], points[0]] : points)
            content.add("S")
        }
    }

    /// Stroke color, width and dashes of shapes; whether there is anything to stroke.
    private mutating func strokeSettings() -> Bool {
        let width = max(annotation.strokeWidth ?? 1, 0)
        content.strokeColor(annotation.strokeColor ?? Self.black)
        content.add([width], "w")
        if let dashes = annotation.strokeDashArray?.filter({ $0.isFinite && $0 >= 0 }),
            dashes.contains(where: { $0 > 0 })
        {
            content.add("[\(dashes.map(PDFSerializer.number).joined(separator: " "))] 0 d")
        }
        return width > 0
    }

    mutating func closedShape() {
        let stroke = strokeSettings()
        let fill = annotation.fillColor
        if let fill { content.fillColor(fill) }
        let inset = max(annotation.strokeWidth ?? 1, 0) / 2
        let box = space.userRect(annotation.bbox)
        let inner = PDFRect(
            minX: box.minX + inset, minY: box.minY + inset, maxX: max(box.maxX - inset, box.minX + inset),
            maxY: max(box.maxY - inset, box.minY + inset))
        switch annotation.type {
        case .rectangle: content.add([inner.minX, inner.minY, inner.width, inner.height], "re")
        case .ellipse: content.ellipse(in: inner)
        default: content.path((annotation.points ?? []).map(user), closed: true)
        }
        content.paint(fill: fill != nil, stroke: stroke)
    }

    /// Lines and polylines, with their line caps.
    mutating func openShape() {
        let stroke = strokeSettings()
        let points: [(x: Double, y: Double)]
        if annotation.type == .line {
            let start = annotation.startPoint ?? Point(x: annotation.bbox.left, y: annotation.bbox.top)
            points = [user(start), user(annotation.endPoint ?? start)]
        } else {
            points = (annotation.points ?? []).map(user)
        }
        guard points.count >= 2 else { return }
        content.path(points)
        content.paint(fill: false, stroke: stroke)
        content.add("[] 0 d")
        if let fill = annotation.fillColor { content.fillColor(fill) }
        let caps = annotation.lineCaps
        let size = max(3 * max(annotation.strokeWidth ?? 1, 0), 6)
        lineCap(caps?.start, at: points[0], from: points[1], size: size)
        lineCap(caps?.end, at: points[points.count - 1], from: points[points.count - 2], size: size)
    }

    /// A line ending at `point`, oriented along the line that comes from `previous`.
    private mutating func lineCap(
        _ cap: LineCap?, at point: (x: Double, y: Double), from previous: (x: Double, y: Double), size: Double
    ) {
        guard let cap else { return }
        let length = hypot(point.x - previous.x, point.y - previous.y)
        guard length > 0 else { return }
        let u = ((point.x - previous.x) / length, (point.y - previous.y) / length)  // outward along the line
        let n = (-u.1, u.0)
        func at(_ along: Double, _ across: Double) -> (x: Double, y: Double) {
            (point.x + u.0 * along + n.0 * across, point.y + u.1 * along + n.1 * across)
        }
        let half = size / 2
        let fill = annotation.fillColor != nil
        switch cap {
        case .openArrow, .reverseOpenArrow:
            let back = cap == .openArrow ? -size : size
            content.path([at(back, half), at(0, 0), at(back, -half)])
            content.add("S")
        case .closedArrow, .reverseClosedArrow:
            let back = cap == .closedArrow ? -size : size
            content.path([at(back, half), at(0, 0), at(back, -half)], closed: true)
            content.paint(fill: fill, stroke: true)
        case .square:
            content.path([at(-half, -half), at(half, -half), at(half, half), at(-half, half)], closed: true)
            content.paint(fill: fill, stroke: true)
        case .circle:
            content.ellipse(
                in: PDFRect(minX: point.x - half, minY: point.y - half, maxX: point.x + half, maxY: point.y + half))
            content.paint(fill: fill, stroke: true)
        case .diamond:
            content.path([at(-half, 0), at(0, half), at(half, 0), at(0, -half)], closed: true)
            content.paint(fill: fill, stroke: true)
        case .butt:
            content.path([at(0, half), at(0, -half)])
            content.add("S")
        case .slash:
            content.path([at(-half * 0.5, -half), at(half * 0.5, half)])
            content.add("S")
        default:
            break
        }
    }

    // MARK: - Markup

    mutating func textMarkup() {
        let color = annotation.color ?? RGBColor(red: 255, green: 255, blue: 0)
        let boxes = (annotation.rects ?? [annotation.bbox]).map(space.userRect)
        if annotation.type == .highlight {
            content.fillColor(color)
            for box in boxes { content.add([box.minX, box.minY, box.width, box.height], "re") }
            content.add("f")
            return
        }
        content.strokeColor(color)
        for box in boxes {
            let width = max(box.height / 14, 0.5)
            content.add([width], "w")
            switch annotation.type {
            case .underline:
                content.path([(box.minX, box.minY + width), (box.maxX, box.minY + width)])
            case .strikeOut:
                content.path([(box.minX, box.minY + box.height / 2), (box.maxX, box.minY + box.height / 2)])
            default:
                // Squiggly: a zigzag along the bottom of the text.
                let step = max(box.height / 6, 1)
                var points: [(x: Double, y: Double)] = []
                var x = box.minX
                var up = false
                while x <= box.maxX {
                    points.append((x, box.minY + (up ? step : 0)))
                    up.toggle()
                    x += step
                }
                content.path(points)
            }
            content.add("S")
        }
    }

    mutating func redaction() {
        var outline = RGBColor(red: 255, green: 0, blue: 0)
        if case .string(let hex)? = annotation["outlineColor"], let color = RGBColor(hex: hex) { outline = color }
        content.strokeColor(outline)
        content.add([1], "w")
        for box in (annotation.rects ?? [annotation.bbox]).map(space.userRect) {
            content.add([box.minX + 0.5, box.minY + 0.5, max(box.width - 1, 0), max(box.height - 1, 0)], "re")
        }
        content.add("S")
    }

    /// A note's icon: a sheet with lines, in the note's color, at the top left of its rectangle.
    mutating func noteIcon() {
        let size = min(20, rect.width, rect.height)
        let (x, y) = (rect.minX, rect.maxY - size)
        content.fillColor(annotation.color ?? RGBColor(red: 255, green: 235, blue: 80))
        content.strokeColor(Self.black)
        content.add([max(size / 40, 0.25)], "w")
        content.add([x + 0.5, y + 0.5, size - 1, size - 1], "re")
        content.add("B")
        for line in 1...3 {
            let lineY = y + size * (1 - Double(line) / 4.5)
            content.path([(x + size * 0.2, lineY), (x + size * 0.8, lineY)])
        }
        content.add("S")
    }
}
