import Foundation
import InstantJSON

extension Drawing {
    /// An image annotation: its attachment as an image XObject scaled into the rectangle and turned
    /// by `rotation`; a gray box with a cross when the bytes are missing or not a JPEG or PNG.
    ///
    /// - Throws: ``PDFError`` with code ``PDFError/Code/limitExceeded`` for an image beyond the
    ///   document's limits.
    mutating func image(_ data: Data?, budget: DecodeBudget) throws(PDFError) {
        let what = "the image attachment '\(annotation.imageAttachmentId ?? "")' of annotation '\(annotation.id ?? "")'"
        guard let data, let image = try ImageXObject(data, budget: budget, what: what) else {
            content.fillColor(RGBColor(red: 220, green: 220, blue: 220))
            content.strokeColor(RGBColor(red: 128, green: 128, blue: 128))
            content.add([rect.minX, rect.minY, rect.width, rect.height], "re")
            content.add("B")
            content.path([(rect.minX, rect.minY), (rect.maxX, rect.maxY)])
            content.path([(rect.minX, rect.maxY), (rect.maxX, rect.minY)])
            content.add("S")
            return
        }
        resources["XObject"] = .dictionary(PDFDictionary(["Im0": .stream(image.stream)]))
        let (x, y, w, h) = (rect.minX, rect.minY, rect.width, rect.height)
        let matrix: [Double]
        switch ((annotation.rotation ?? 0) % 360 + 360) % 360 {
        case 90: matrix = [0, h, -w, 0, x + w, y]
        case 180: matrix = [-w, 0, 0, -h, x + w, y + h]
        case 270: matrix = [0, -h, w, 0, x, y + h]
        default: matrix = [w, 0, 0, h, x, y]
        }
        content.add("q")
        content.add(matrix, "cm")
        content.add("/Im0 Do")
        content.add("Q")
    }
}

/// An image attachment as a PDF image XObject (ISO 32000-1, 8.9.5): JPEG data as it is with
/// `/DCTDecode`; PNG decoded to samples (the writer compresses them) with an `/SMask` for alpha.
struct ImageXObject {
    var stream: PDFStream

    /// The image of a JPEG or PNG file, or `nil` for other or broken bytes.
    ///
    /// - Parameter what: the image, for errors (such as "the image attachment 'id'").
    /// - Throws: ``PDFError`` with code ``PDFError/Code/limitExceeded`` for a PNG beyond the
    ///   document's limits (too many pixels, or more samples than the budget has left).
    init?(_ data: Data, budget: DecodeBudget, what: String) throws(PDFError) {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xFF, 0xD8]) {
            guard let stream = Self.jpeg(bytes) else { return nil }
            self.stream = stream
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            guard let stream = try Self.png(bytes, budget: budget, what: what) else { return nil }
            self.stream = stream
        } else {
            return nil
        }
    }

    /// The dictionary of an image of 8-bit samples.
    static func image(width: Int, height: Int, colorSpace: String) -> PDFDictionary {
        PDFDictionary([
            "Type": .name("XObject"), "Subtype": .name("Image"), "Width": .integer(width),
            "Height": .integer(height), "ColorSpace": .name(colorSpace), "BitsPerComponent": .integer(8),
        ])
    }

    /// The frame header (SOF) gives the size and the number of components; an Adobe APP14 marker
    /// means inverted CMYK.
    private static func jpeg(_ bytes: [UInt8]) -> PDFStream? {
        var index = 2
        var adobe = false
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF {
                index += 1
                continue
            }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else { return nil }
            if marker == 0xEE, bytes[(index + 4)...].starts(with: Array("Adobe".utf8)) { adobe = true }
            let frameMarkers: Set<UInt8> = [
                0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF,
            ]
            if frameMarkers.contains(marker), length >= 8 {
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                let components = Int(bytes[index + 9])
                guard width > 0, height > 0 else { return nil }
                let colorSpace = components == 1 ? "DeviceGray" : components == 4 ? "DeviceCMYK" : "DeviceRGB"
                var dictionary = image(width: width, height: height, colorSpace: colorSpace)
                dictionary["Filter"] = .name("DCTDecode")
                if components == 4, adobe {
                    dictionary["Decode"] = .array([1, 0, 1, 0, 1, 0, 1, 0].map(PDFObject.integer))
                }
                return PDFStream(dictionary: dictionary, rawData: Data(bytes))
            }
            index += 2 + length
        }
        return nil
    }

    /// PNG (ISO/IEC 15948): non-interlaced gray, RGB, palette, gray with alpha and RGBA, at 8 or 16
    /// bits per sample (16 keeps the high byte), palettes also at 1, 2 and 4 bits.
    ///
    /// The header's dimensions are checked against the limits before anything is decompressed;
    /// the samples are then decompressed once, unfiltered in place and split into color and alpha.
    private static func png(_ bytes: [UInt8], budget: DecodeBudget, what: String) throws(PDFError) -> PDFStream? {
        var index = 8
        var header: [UInt8] = []
        var palette: [UInt8] = []
        var transparency: [UInt8] = []
        var compressed: [UInt8] = []
        while index + 8 <= bytes.count {
            let length =
                Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
                | Int(bytes[index + 3])
            let type = String(decoding: bytes[(index + 4)..<(index + 8)], as: UTF8.self)
            let start = index + 8
            guard length >= 0, start + length <= bytes.count else { return nil }
            let chunk = bytes[start..<(start + length)]
            switch type {
            case "IHDR": header = Array(chunk)
            case "PLTE": palette = Array(chunk)
            case "tRNS": transparency = Array(chunk)
            case "IDAT": compressed += chunk
            default: break
            }
            if type == "IEND" { break }
            index = start + length + 4  // and the CRC
        }
        guard header.count == 13 else { return nil }
        let width = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        let height = Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
        let (depth, colorType, interlace) = (Int(header[8]), header[9], header[12])
        let channels: Int
        switch colorType {
        case 0, 3: channels = 1
        case 2: channels = 3
        case 4: channels = 2
        case 6: channels = 4
        default: return nil
        }
        guard width > 0, height > 0, interlace == 0,
            depth == 8 || depth == 16 || (channels == 1 && [1, 2, 4].contains(depth)),
            colorType != 3 || !palette.isEmpty
        else { return nil }
        // Before any buffer for the samples: at most maxImagePixels pixels, so none of the sizes
        // below can overflow, and their decompressed rows must fit what the budget has left.
        try budget.checkImage(width: width, height: height, what: what)
        let rowBytes = (width * channels * depth + 7) / 8
        let expected = height * (rowBytes + 1)
        guard expected <= budget.remaining else { throw budget.refuseDecoding() }
        var samples: [UInt8]
        do throws(PDFError) {
            samples = try StreamFilters.inflate(compressed, budget: budget, expected: expected)
        } catch let error where error.code == .limitExceeded {
            throw error
        } catch {
            return nil
        }
        guard samples.count >= expected,
            unfilter(&samples, rows: height, rowBytes: rowBytes, pixelBytes: max(channels * depth / 8, 1))
        else { return nil }
        return split(
            samples, width: width, height: height, depth: depth, colorType: colorType, palette: palette,
            transparency: transparency)
    }

    /// The image of unfiltered PNG rows (each after its filter byte): 8-bit color samples (a
    /// palette's colors looked up, 16-bit samples cut to their high byte, smaller ones spread out)
    /// and, for images with alpha, a soft mask of the alpha samples.
    private static func split(
        _ rows: [UInt8], width: Int, height: Int, depth: Int, colorType: UInt8, palette: [UInt8],
        transparency: [UInt8]
    ) -> PDFStream {
        let channels = colorType == 2 ? 3 : colorType == 4 ? 2 : colorType == 6 ? 4 : 1
        let colorChannels = colorType == 0 || colorType == 4 ? 1 : 3
        let hasAlpha = colorType == 4 || colorType == 6 || (colorType == 3 && !transparency.isEmpty)
        let rowBytes = (width * channels * depth + 7) / 8
        var color: [UInt8] = []
        color.reserveCapacity(width * height * colorChannels)
        var alpha: [UInt8] = []
        if hasAlpha { alpha.reserveCapacity(width * height) }
        let maximum = (1 << depth) - 1
        for y in 0..<height {
            let row = y * (rowBytes + 1) + 1
            func sample(_ index: Int) -> Int {
                switch depth {
                case 16: return Int(rows[row + index * 2])
                case 8: return Int(rows[row + index])
                default:
                    let bit = index * depth
                    return Int(rows[row + bit / 8] >> (8 - depth - bit % 8)) & maximum
                }
            }
            for x in 0..<width {
                switch colorType {
                case 3:
                    let entry = sample(x)
                    let base = entry * 3
                    if base + 2 < palette.count {
                        color += palette[base...(base + 2)]
                    } else {
                        color += [0, 0, 0]
                    }
                    if hasAlpha { alpha.append(entry < transparency.count ? transparency[entry] : 255) }
                case 0 where depth < 8:
                    color.append(UInt8(sample(x) * 255 / maximum))
                default:
                    for channel in 0..<colorChannels { color.append(UInt8(sample(x * channels + channel))) }
                    if hasAlpha { alpha.append(UInt8(sample(x * channels + colorChannels))) }
                }
            }
        }
        if colorType == 3, alpha.allSatisfy({ $0 == 255 }) { alpha = [] }
        var dictionary = image(
            width: width, height: height, colorSpace: colorChannels == 1 ? "DeviceGray" : "DeviceRGB")
        if !alpha.isEmpty {
            let mask = image(width: width, height: height, colorSpace: "DeviceGray")
            dictionary["SMask"] = .stream(PDFStream(dictionary: mask, rawData: Data(alpha)))
        }
        return PDFStream(dictionary: dictionary, rawData: Data(color))
    }

    /// Undoes the PNG row filters (None, Sub, Up, Average, Paeth) in place; `false` for an unknown
    /// filter.
    private static func unfilter(_ data: inout [UInt8], rows: Int, rowBytes: Int, pixelBytes: Int) -> Bool {
        data.withUnsafeMutableBufferPointer { buffer in
            for rowIndex in 0..<rows {
                let start = rowIndex * (rowBytes + 1) + 1
                let filter = buffer[start - 1]
                let previous = start - rowBytes - 1  // the unfiltered row above, for every row but the first
                for i in 0..<rowBytes {
                    let left = i >= pixelBytes ? Int(buffer[start + i - pixelBytes]) : 0
                    let up = rowIndex > 0 ? Int(buffer[previous + i]) : 0
                    let upLeft = rowIndex > 0 && i >= pixelBytes ? Int(buffer[previous + i - pixelBytes]) : 0
                    let predictor: Int
                    switch filter {
                    case 0: predictor = 0
                    case 1: predictor = left
                    case 2: predictor = up
                    case 3: predictor = (left + up) / 2
                    case 4:
                        let estimate = left + up - upLeft
                        let (a, b, c) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
                        predictor = a <= b && a <= c ? left : (b <= c ? up : upLeft)
                    default: return false
                    }
                    buffer[start + i] = UInt8((Int(buffer[start + i]) + predictor) & 0xFF)
                }
            }
            return true
        }
    }
}
