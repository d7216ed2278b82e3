import Foundation
import InstantJSON
import InstantPDF
import InstantTesting

/// Records of every annotation type, with the members the reader gives back, for writer tests.
enum WriterFixtures {
    /// A one-page US Letter file without annotations, with a classic cross-reference table.
    static let plainPDF = TestPDF.make(pageCount: 1, title: "Writer test page", contentSize: 64)
    /// A one-page US Letter file without annotations whose cross-reference section is a stream.
    static let streamPDF = TestPDF.make(pageCount: 1, title: "Writer test page", crossReference: .stream)

    static func base(
        _ type: AnnotationType, _ id: String, left: Double, top: Double, width: Double = 80, height: Double = 40
    )
        -> Annotation
    {
        var annotation = Annotation(
            type: type, pageIndex: 0, bbox: Rect(left: left, top: top, width: width, height: height), id: id)
        annotation.name = id
        annotation.creatorName = "Ada"
        annotation.createdAt = "2026-11-20T10:11:12Z"
        annotation.updatedAt = "2026-11-21T08:00:00+01:00"
        return annotation
    }

    /// One record of every type the writer writes, spread over a page; `jpeg` is the image.
    static func everyType(jpegKey: String) -> [Annotation] {
        var records: [Annotation] = []
        var note = base(.note, "note", left: 20, top: 20, width: 24, height: 24)
        note.text = AnnotationText(value: "A note — with ünïcode")
        note.icon = "help"
        note.color = RGBColor(red: 255, green: 204, blue: 0)
        records.append(note)

        var text = base(.text, "freetext", left: 60, top: 20, width: 200, height: 60)
        text.text = AnnotationText(value: "Free text that is long enough to wrap onto a second line")
        text.fontSize = 14
        text.fontColor = RGBColor(red: 0, green: 0, blue: 255)
        text.horizontalAlign = "right"
        text.backgroundColor = RGBColor(red: 255, green: 255, blue: 204)
        text["callout"] = [
            "start": [300, 100], "knee": [280, 90], "end": [260, 80], "innerRectInset": [10, 0, 0, 0],
            "cap": "openArrow",
        ]
        records.append(text)

        for (index, type) in [AnnotationType.highlight, .underline, .squiggly, .strikeOut].enumerated() {
            var markup = base(type, "markup\(index)", left: 40, top: 120 + Double(index) * 30, width: 150, height: 14)
            markup.rects = [
                Rect(left: 40, top: 120 + Double(index) * 30, width: 100, height: 14),
                Rect(left: 40, top: 134 + Double(index) * 30, width: 150, height: 10),
            ]
            markup.bbox = Rect(left: 40, top: 120 + Double(index) * 30, width: 150, height: 24)
            markup.color = RGBColor(red: 0, green: 170, blue: 0)
            markup.note = "markup \(index)"
            if type == .highlight { markup.blendMode = .multiply }
            records.append(markup)
        }

        var ink = base(.ink, "ink", left: 300, top: 120, width: 100, height: 60)
        ink.lines = InkLines(points: [
            [Point(x: 305, y: 125), Point(x: 350, y: 170), Point(x: 395, y: 130)],
            [Point(x: 310, y: 175), Point(x: 390, y: 175)],
        ])
        ink.lineWidth = 3
        ink.strokeColor = RGBColor(red: 204, green: 0, blue: 0)
        records.append(ink)

        var line = base(.line, "line", left: 40, top: 260, width: 200, height: 40)
        line.startPoint = Point(x: 45, y: 295)
        line.endPoint = Point(x: 235, y: 265)
        line.lineCaps = (.openArrow, .closedArrow)
        line.strokeColor = RGBColor(red: 0, green: 0, blue: 0)
        line.fillColor = RGBColor(red: 255, green: 0, blue: 0)
        line.strokeWidth = 2
        line.strokeDashArray = [4, 2]
        records.append(line)

        var rectangle = base(.rectangle, "rectangle", left: 300, top: 260, width: 120, height: 60)
        rectangle.strokeColor = RGBColor(red: 0, green: 0, blue: 255)
        rectangle.fillColor = RGBColor(red: 255, green: 0, blue: 0)
        rectangle.strokeWidth = 4
        records.append(rectangle)

        var ellipse = base(.ellipse, "ellipse", left: 440, top: 260, width: 100, height: 60)
        ellipse.strokeColor = RGBColor(red: 0, green: 128, blue: 0)
        ellipse.strokeWidth = 1
        ellipse.opacity = 0.5
        records.append(ellipse)

        var polygon = base(.polygon, "polygon", left: 40, top: 340, width: 100, height: 80)
        polygon.points = [Point(x: 40, y: 420), Point(x: 90, y: 340), Point(x: 140, y: 420)]
        polygon.strokeColor = RGBColor(red: 128, green: 0, blue: 128)
        polygon.strokeWidth = 1
        records.append(polygon)

        var polyline = base(.polyline, "polyline", left: 160, top: 340, width: 100, height: 80)
        polyline.points = [Point(x: 160, y: 420), Point(x: 210, y: 340), Point(x: 260, y: 420)]
        polyline.lineCaps = (.circle, .square)
        polyline.strokeColor = RGBColor(red: 0, green: 0, blue: 0)
        polyline.strokeWidth = 2
        records.append(polyline)

        var stamp = base(.stamp, "stamp", left: 300, top: 340, width: 150, height: 50)
        stamp.stampType = .approved
        stamp.color = RGBColor(red: 0, green: 128, blue: 0)
        records.append(stamp)

        var custom = base(.stamp, "custom", left: 300, top: 400, width: 150, height: 50)
        custom.stampType = .custom
        custom.title = "Checked"
        records.append(custom)

        var link = base(.link, "link", left: 40, top: 440, width: 120, height: 20)
        link.action = .uri("https://example.com/a?b=(c)")
        link["borderWidth"] = 0
        records.append(link)

        var goTo = base(.link, "goto", left: 180, top: 440, width: 120, height: 20)
        goTo.action = .goTo(pageIndex: 0)
        goTo["borderWidth"] = 0
        records.append(goTo)

        var redaction = base(.redaction, "redaction", left: 40, top: 480, width: 200, height: 20)
        redaction.rects = [Rect(left: 40, top: 480, width: 200, height: 20)]
        redaction.fillColor = RGBColor(red: 0, green: 0, blue: 0)
        redaction["outlineColor"] = "#FF0000"
        redaction["overlayText"] = "REDACTED"
        records.append(redaction)

        var image = base(.image, "image", left: 300, top: 480, width: 64, height: 48)
        image.imageAttachmentId = jpegKey
        image.contentType = "image/jpeg"
        records.append(image)
        return records
    }

    /// A 16×16 baseline JPEG (a red square), made with Pillow.
    static let jpeg = Data(
        base64Encoded:
            "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAQABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD50ooor8MP9Uz/2Q=="
    )!

    /// A record as the reader gives it back, up to the writer's documented normalisations: the
    /// `id` and `pdfObjectId` are the new object's number, coordinates are compared to 1/100 pt.
    static func normalised(_ annotation: Annotation) -> JSONValue {
        var json = annotation.json
        for key in ["id", "pdfObjectId", "v"] { json[key] = nil }
        return rounded(.object(json))
    }

    static func rounded(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let number): return .double((number * 100).rounded() / 100)
        case .integer(let number): return .double(Double(number))
        case .array(let elements): return .array(elements.map(rounded))
        case .object(let members): return .object(members.mapValues(rounded))
        default: return value
        }
    }
}
