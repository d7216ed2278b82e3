import Foundation
import InstantJSON
import Testing

@testable import InstantPDF

/// The appearance streams the writer gives new annotations.
@Suite("Appearance streams")
struct AppearanceTests {
    /// An A4 page: user-space y = 842 − page-space y.
    let space = PageSpace(cropBox: PDFRect(minX: 0, minY: 0, maxX: 595, maxY: 842))

    func appearance(_ annotation: Annotation, attachments: [String: Data] = [:]) throws -> (String, PDFDictionary) {
        let built = try #require(
            try AppearanceBuilder.appearance(
                for: annotation, space: space, rect: space.userRect(annotation.bbox), attachments: attachments,
                budget: DecodeBudget(limits: .default)))
        return (String(decoding: built.content, as: UTF8.self), built.resources)
    }

    @Test func rectangleIsInsetByHalfItsStrokeAndFilled() throws {
        var rectangle = Annotation(
            type: .rectangle, pageIndex: 0, bbox: Rect(left: 10, top: 20, width: 100, height: 50))
        rectangle.strokeWidth = 4
        rectangle.strokeColor = RGBColor(red: 255, green: 0, blue: 0)
        rectangle.fillColor = RGBColor(red: 0, green: 0, blue: 255)
        rectangle.strokeDashArray = [3, 1]
        let (content, resources) = try appearance(rectangle)
        // bbox bottom at 842 − 20 − 50 = 772; inset by 2.
        #expect(content.contains("12 774 96 46 re"))
        #expect(content.contains("1 0 0 RG") && content.contains("0 0 1 rg") && content.contains("4 w"))
        #expect(content.contains("[3 1] 0 d"))
        #expect(content.hasSuffix("B\n"))
        #expect(resources["ExtGState"] == nil)
    }

    @Test func opacityAndMultiplyGoThroughAnExtGState() throws {
        var ellipse = Annotation(type: .ellipse, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 40, height: 20))
        ellipse.opacity = 0.25
        let (content, resources) = try appearance(ellipse)
        let state = resources["ExtGState"]?.dictionaryValue?["GS0"]?.dictionaryValue
        #expect(state?["CA"] == .real(0.25) && state?["ca"] == .real(0.25))
        #expect(content.hasPrefix("/GS0 gs\n"))
        #expect(content.components(separatedBy: " c\n").count - 1 == 4)  // four Bézier curves

        var highlight = Annotation(type: .highlight, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 40, height: 10))
        highlight.rects = [highlight.bbox]
        let (_, highlightResources) = try appearance(highlight)
        #expect(highlightResources["ExtGState"]?.dictionaryValue?["GS0"]?.dictionaryValue?["BM"] == .name("Multiply"))
    }

    @Test func lineCapsAreDrawnAtBothEnds() throws {
        var line = Annotation(type: .line, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 100, height: 10))
        line.startPoint = Point(x: 0, y: 5)
        line.endPoint = Point(x: 100, y: 5)
        line.lineCaps = (.closedArrow, .circle)
        line.fillColor = RGBColor(red: 0, green: 255, blue: 0)
        let (content, _) = try appearance(line)
        // The arrow's tip is the start point (0, 837); its wings reach 6 points along the line.
        #expect(content.contains("6 834 m\n0 837 l\n6 840 l\nh\nB"))
        #expect(content.components(separatedBy: " c\n").count - 1 == 4)  // the circle at the end
    }

    @Test func freeTextIsWrappedAndAligned() throws {
        var text = Annotation(type: .text, pageIndex: 0, bbox: Rect(left: 100, top: 100, width: 120, height: 80))
        text.text = AnnotationText(value: "Right aligned text that needs three lines here")
        text.fontSize = 12
        text.horizontalAlign = "right"
        let (content, resources) = try appearance(text)
        let lines = content.split(separator: "\n").filter { $0.hasSuffix(" Tj") }
        #expect(lines.count == 3)
        #expect(resources["Font"]?.dictionaryValue?["Helv"]?.dictionaryValue?["BaseFont"] == .name("Helvetica"))
        // Each line ends 2 points (the padding) before the right edge at x = 220.
        let matrices = content.split(separator: "\n").filter { $0.hasSuffix(" Tm") }
        for (matrix, line) in zip(matrices, lines) {
            let x = Double(matrix.split(separator: " ")[4])!
            let shown = String(line.dropFirst().prefix { $0 != ")" })
            #expect(abs(x + StandardFont.helvetica.width(of: shown, size: 12) - 218) < 0.01)
        }
    }

    @Test func fontWidthsFollowTheMetrics() {
        // Helvetica: H 722, e 556, l 222, o 556 (AFM).
        #expect(StandardFont.helvetica.width(of: "Hello", size: 1000) == 2278)
        #expect(StandardFont.courier.width(of: "iiii", size: 10) == 24)
        #expect(StandardFont.timesRoman.width(of: "W", size: 1000) == 944)
        #expect(StandardFont.helveticaBold.width(of: "~", size: 1000) == 584)
        #expect(StandardFont.winAnsiBytes("€é✓") == [0x80, 0xE9, UInt8(ascii: "?")])
        #expect(ContentStream.literal("(a\\b)") == "(\\(a\\\\b\\))")
    }

    @Test func stampTitleFitsItsBox() throws {
        var stamp = Annotation(type: .stamp, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 150, height: 50))
        stamp.stampType = .forPublicRelease
        let (content, resources) = try appearance(stamp)
        #expect(content.contains("(FOR PUBLIC RELEASE) Tj"))
        #expect(resources["Font"]?.dictionaryValue?["HeBo"] != nil)
        let size = try #require(content.split(separator: "\n").first { $0.hasSuffix(" Tf") }?.split(separator: " ")[1])
        #expect(StandardFont.helveticaBold.width(of: "FOR PUBLIC RELEASE", size: Double(size)!) < 150)
    }

    @Test func jpegIsEmbeddedAsIs() throws {
        var image = Annotation(type: .image, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 64, height: 48))
        image.imageAttachmentId = "jpeg"
        let (content, resources) = try appearance(image, attachments: ["jpeg": WriterFixtures.jpeg])
        let stream = try #require(resources["XObject"]?.dictionaryValue?["Im0"]?.streamValue)
        #expect(stream.dictionary["Width"] == .integer(16) && stream.dictionary["Height"] == .integer(16))
        #expect(stream.dictionary["Filter"] == .name("DCTDecode"))
        #expect(stream.dictionary["ColorSpace"] == .name("DeviceRGB"))
        #expect(stream.rawData == WriterFixtures.jpeg)
        #expect(content.contains("64 0 0 48 0 794 cm"))
    }

    @Test func pngWithAlphaGetsASoftMask() throws {
        var image = Annotation(type: .image, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 20, height: 10))
        image.imageAttachmentId = "png"
        let (_, resources) = try appearance(image, attachments: ["png": Self.png(width: 2, height: 2)])
        let stream = try #require(resources["XObject"]?.dictionaryValue?["Im0"]?.streamValue)
        #expect(stream.dictionary["ColorSpace"] == .name("DeviceRGB"))
        // Row filters undone: Sub on the first row, Up on the second.
        #expect([UInt8](stream.rawData) == [255, 0, 0, 0, 255, 0, 255, 0, 0, 0, 255, 0])
        let mask = try #require(stream.dictionary["SMask"]?.streamValue)
        #expect([UInt8](mask.rawData) == [255, 128, 255, 128])
    }

    @Test func brokenImagesGetAPlaceholder() throws {
        var image = Annotation(type: .image, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 20, height: 10))
        image.imageAttachmentId = "junk"
        for bytes in [
            Data("not an image".utf8), Data([0xFF, 0xD8, 0xFF]),
            Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]),
        ] {
            let (content, resources) = try appearance(image, attachments: ["junk": bytes])
            #expect(resources["XObject"] == nil)
            #expect(content.contains(" re\nB\n"))
        }
    }

    /// PNGs of the other color types and bit depths: palettes with transparency, gray scaled up
    /// from 4 bits or cut down from 16, gray with alpha.
    @Test func everyColorTypeIsConverted() throws {
        func image(_ png: Data) throws -> PDFStream {
            var image = Annotation(type: .image, pageIndex: 0, bbox: Rect(left: 0, top: 0, width: 20, height: 10))
            image.imageAttachmentId = "png"
            let (_, resources) = try appearance(image, attachments: ["png": png])
            return try #require(resources["XObject"]?.dictionaryValue?["Im0"]?.streamValue)
        }
        // Indexes 2, 1, 0 at 2 bits; index 1 is transparent, index 2 has no tRNS entry (opaque).
        let palette = try image(
            Self.png(
                width: 3, height: 1, depth: 2, colorType: 3, rows: [0, 0b1001_0000],
                chunks: [("PLTE", [10, 20, 30, 40, 50, 60, 70, 80, 90]), ("tRNS", [255, 0])]))
        #expect([UInt8](palette.rawData) == [70, 80, 90, 40, 50, 60, 10, 20, 30])
        #expect(palette.dictionary["SMask"]?.streamValue.map { [UInt8]($0.rawData) } == [255, 0, 255])
        let gray4 = try image(Self.png(width: 2, height: 1, depth: 4, colorType: 0, rows: [0, 0xF5]))
        #expect([UInt8](gray4.rawData) == [255, 85])
        #expect(gray4.dictionary["ColorSpace"] == .name("DeviceGray") && gray4.dictionary["SMask"] == nil)
        let gray16 = try image(
            Self.png(width: 2, height: 1, depth: 16, colorType: 0, rows: [0, 0x12, 0x34, 0xAB, 0xCD]))
        #expect([UInt8](gray16.rawData) == [0x12, 0xAB])
        let grayAlpha = try image(Self.png(width: 2, height: 1, depth: 8, colorType: 4, rows: [0, 10, 200, 20, 100]))
        #expect([UInt8](grayAlpha.rawData) == [10, 20])
        #expect(grayAlpha.dictionary["SMask"]?.streamValue.map { [UInt8]($0.rawData) } == [200, 100])
    }

    /// A 2×2 RGBA PNG: red and green pixels, the second column half transparent; the first row
    /// uses the Sub filter, the second the Up filter.
    static func png(width: Int, height: Int) -> Data {
        let rows: [UInt8] = [
            1, 255, 0, 0, 255, 1, 255, 0, 129,  // Sub: (255,0,0,255), then (0,255,0,128) minus it
            2, 0, 0, 0, 0, 0, 0, 0, 0,  // Up: same as the row above
        ]
        return png(width: width, height: height, depth: 8, colorType: 6, rows: rows)
    }

    /// A PNG of these filtered rows, with more chunks (such as a palette) before the data.
    static func png(
        width: Int, height: Int, depth: UInt8, colorType: UInt8, rows: [UInt8], chunks: [(String, [UInt8])] = []
    ) -> Data {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let length = [UInt8](withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init))
            return length + Array(type.utf8) + data + [0, 0, 0, 0]  // the reader does not check CRCs
        }
        var header = [UInt8](withUnsafeBytes(of: UInt32(width).bigEndian, Array.init))
        header += [UInt8](withUnsafeBytes(of: UInt32(height).bigEndian, Array.init))
        header += [depth, colorType, 0, 0, 0]
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", header)
        for (type, data) in chunks { png += chunk(type, data) }
        png += chunk("IDAT", StreamFilters.deflate(rows)) + chunk("IEND", [])
        return Data(png)
    }
}
