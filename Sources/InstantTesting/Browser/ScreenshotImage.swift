import CZlib
import Foundation

/// The pixels of a PNG screenshot (8-bit RGB or RGBA, not interlaced: what browsers' screenshots
/// are), to check what a page drew where.
public struct ScreenshotImage: Sendable {
    /// The size in pixels.
    public let width: Int
    public let height: Int
    /// Red, green, blue, alpha for each pixel, row by row.
    private let pixels: [UInt8]

    /// One pixel's colour.
    public struct Color: Sendable, Equatable, CustomStringConvertible {
        public var red: UInt8
        public var green: UInt8
        public var blue: UInt8
        public var description: String { "rgb(\(red), \(green), \(blue))" }

        public init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }
    }

    /// Decodes a PNG file; `nil` unless it is an 8-bit RGB or RGBA, non-interlaced PNG.
    public init?(png data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count > 33, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        func integer(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var offset = 8
        var header: (width: Int, height: Int, channels: Int)?
        var compressed: [UInt8] = []
        while offset + 8 <= bytes.count {
            let length = integer(offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let start = offset + 8
            guard length >= 0, start + length + 4 <= bytes.count else { return nil }
            switch type {
            case "IHDR":
                guard length >= 13, bytes[start + 8] == 8, bytes[start + 12] == 0 else { return nil }
                let channels: Int
                switch bytes[start + 9] {
                case 2: channels = 3
                case 6: channels = 4
                default: return nil
                }
                header = (integer(start), integer(start + 4), channels)
            case "IDAT": compressed += bytes[start..<start + length]
            default: break
            }
            offset = start + length + 4
        }
        guard let header, header.width > 0, header.height > 0, header.width * header.height <= 64 << 20 else {
            return nil
        }
        let stride = header.width * header.channels
        var raw = [UInt8](repeating: 0, count: header.height * (stride + 1))
        var rawLength = uLongf(raw.count)
        let status = raw.withUnsafeMutableBufferPointer { output in
            compressed.withUnsafeBufferPointer { input in
                uncompress(output.baseAddress, &rawLength, input.baseAddress, uLong(input.count))
            }
        }
        guard status == Z_OK, Int(rawLength) == raw.count else { return nil }
        var pixels = [UInt8](repeating: 255, count: header.width * header.height * 4)
        var previous = [UInt8](repeating: 0, count: stride)
        var row = [UInt8](repeating: 0, count: stride)
        let step = header.channels
        for y in 0..<header.height {
            let base = y * (stride + 1)
            let filter = raw[base]
            for x in 0..<stride {
                let value = raw[base + 1 + x]
                let left = x >= step ? row[x - step] : 0
                let up = previous[x]
                let upLeft = x >= step ? previous[x - step] : 0
                switch filter {
                case 0: row[x] = value
                case 1: row[x] = value &+ left
                case 2: row[x] = value &+ up
                case 3: row[x] = value &+ UInt8((Int(left) + Int(up)) / 2)
                case 4:
                    let estimate = Int(left) + Int(up) - Int(upLeft)
                    let (a, b, c) = (abs(estimate - Int(left)), abs(estimate - Int(up)), abs(estimate - Int(upLeft)))
                    row[x] = value &+ (a <= b && a <= c ? left : b <= c ? up : upLeft)
                default: return nil
                }
            }
            for x in 0..<header.width {
                for channel in 0..<header.channels {
                    pixels[(y * header.width + x) * 4 + channel] = row[x * step + channel]
                }
            }
            swap(&previous, &row)
        }
        width = header.width
        height = header.height
        self.pixels = pixels
    }

    /// The colour at a pixel, or `nil` outside the image.
    public func color(x: Int, y: Int) -> Color? {
        guard (0..<width).contains(x), (0..<height).contains(y) else { return nil }
        let at = (y * width + x) * 4
        return Color(red: pixels[at], green: pixels[at + 1], blue: pixels[at + 2])
    }

    /// Whether some pixel within `radius` of a point has a colour that `matches` says yes to.
    public func anyPixel(nearX x: Double, y: Double, radius: Int, where matches: (Color) -> Bool) -> Bool {
        let (cx, cy) = (Int(x.rounded()), Int(y.rounded()))
        for dy in -radius...radius {
            for dx in -radius...radius {
                if let color = color(x: cx + dx, y: cy + dy), matches(color) { return true }
            }
        }
        return false
    }
}
