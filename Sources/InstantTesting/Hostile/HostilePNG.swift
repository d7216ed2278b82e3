import CZlib
import Foundation

/// PNG files of any dimensions whose pixels are all zero, built without holding the pixels: a
/// palette PNG of 20,000 × 20,000 pixels takes about 50 KB.
public enum HostilePNG {
    /// The PNG color types.
    public enum ColorType: UInt8, Sendable {
        case gray = 0
        case rgb = 2
        case palette = 3
        case grayAlpha = 4
        case rgba = 6

        var channels: Int {
            switch self {
            case .gray, .palette: 1
            case .grayAlpha: 2
            case .rgb: 3
            case .rgba: 4
            }
        }
    }

    /// A non-interlaced PNG of zero samples (a palette image has a palette of black and white).
    public static func make(width: Int, height: Int, colorType: ColorType, bitDepth: Int = 8) -> Data {
        let rowBytes = (width * colorType.channels * bitDepth + 7) / 8
        // Each row: filter byte 0 (None), then zero samples.
        let samples = EncodedBytes([.repeated([0], count: (rowBytes + 1) * height)]).deflated()
        var header = [UInt8](withUnsafeBytes(of: UInt32(width).bigEndian, Array.init))
        header += withUnsafeBytes(of: UInt32(height).bigEndian, Array.init)
        header += [UInt8(bitDepth), colorType.rawValue, 0, 0, 0]
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", header)
        if colorType == .palette { png += chunk("PLTE", [0, 0, 0, 255, 255, 255]) }
        png += chunk("IDAT", samples) + chunk("IEND", [])
        return Data(png)
    }

    /// A chunk: length, type, data and the CRC of type and data.
    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        let crc = typed.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        return withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init) + typed
            + withUnsafeBytes(of: crc.bigEndian, Array.init)
    }
}
