import CZlib
import Foundation

/// Bytes too many to hold, kept as literal parts and parts that repeat a pattern: what the
/// encoders of ``HostilePDF`` turn gigabytes of zeros into, one filter after the other, without
/// ever holding the decoded bytes.
public struct EncodedBytes: Sendable {
    /// A part of the bytes.
    public enum Part: Sendable {
        /// These bytes.
        case literal([UInt8])
        /// `pattern` repeated `count` times.
        case repeated([UInt8], count: Int)
    }

    /// The parts, in order.
    public var parts: [Part]

    /// Bytes made of `parts`.
    public init(_ parts: [Part]) { self.parts = parts }

    /// `count` zero bytes.
    public static func zeros(_ count: Int) -> EncodedBytes { EncodedBytes([.repeated([0], count: count)]) }

    /// The number of bytes.
    public var count: Int {
        parts.reduce(0) { total, part in
            switch part {
            case .literal(let bytes): total + bytes.count
            case .repeated(let pattern, let count): total + pattern.count * count
            }
        }
    }

    /// The bytes themselves (only for bytes small enough to hold).
    public var bytes: [UInt8] {
        parts.flatMap { part -> [UInt8] in
            switch part {
            case .literal(let bytes): bytes
            case .repeated(let pattern, let count): Array([[UInt8]](repeating: pattern, count: count).joined())
            }
        }
    }

    /// The bytes of a zlib stream (`/FlateDecode`) at the best compression, compressed part by part.
    public func deflated() -> [UInt8] {
        var stream = z_stream()
        precondition(
            deflateInit_(&stream, Z_BEST_COMPRESSION, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func feed(_ input: [UInt8], flush: Int32 = Z_NO_FLUSH) {
            input.withUnsafeBufferPointer { inputBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
                stream.avail_in = uInt(inputBuffer.count)
                var status = Z_OK
                repeat {
                    status = buffer.withUnsafeMutableBufferPointer { outputBuffer in
                        stream.next_out = outputBuffer.baseAddress
                        stream.avail_out = uInt(outputBuffer.count)
                        let status = CZlib.deflate(&stream, flush)
                        output += outputBuffer.prefix(outputBuffer.count - Int(stream.avail_out))
                        return status
                    }
                } while stream.avail_in > 0 || stream.avail_out == 0 || (flush == Z_FINISH && status == Z_OK)
            }
        }
        for part in parts {
            switch part {
            case .literal(let bytes): feed(bytes)
            case .repeated(let pattern, let count):
                // Whole patterns, about 64 KiB at a time.
                let perChunk = max(1, 65_536 / max(pattern.count, 1))
                let chunk = Array([[UInt8]](repeating: pattern, count: min(perChunk, count)).joined())
                for _ in 0..<(count / perChunk) { feed(chunk) }
                feed(Array([[UInt8]](repeating: pattern, count: count % perChunk).joined()))
            }
        }
        feed([], flush: Z_FINISH)
        return output
    }

    /// `prefix`, then `count` zeros, as `/RunLengthDecode` data: 128 zeros in two bytes.
    public static func runLength(_ prefix: [UInt8], zeros count: Int) -> EncodedBytes {
        var parts: [Part] = stride(from: 0, to: prefix.count, by: 128).map { start in
            let chunk = prefix[start..<min(start + 128, prefix.count)]
            return .literal([UInt8(chunk.count - 1)] + chunk)
        }
        parts.append(.repeated([129, 0], count: count / 128))
        switch count % 128 {
        case 0: break
        case 1: parts.append(.literal([0, 0]))  // one literal byte
        case let rest: parts.append(.literal([UInt8(257 - rest), 0]))
        }
        parts.append(.literal([128]))
        return EncodedBytes(parts)
    }

    /// `prefix` (padded with spaces to whole groups of 4), then `count` zeros, as `/ASCII85Decode`
    /// data: 4 zeros in the one character `z`.
    public static func ascii85(_ prefix: [UInt8], zeros count: Int) -> EncodedBytes {
        let padded = prefix + [UInt8](repeating: UInt8(ascii: " "), count: (4 - prefix.count % 4) % 4)
        var text: [UInt8] = []
        for start in stride(from: 0, to: padded.count, by: 4) {
            var value = padded[start..<start + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            var group = [UInt8](repeating: 0, count: 5)
            for index in (0..<5).reversed() {
                group[index] = UInt8(value % 85) + UInt8(ascii: "!")
                value /= 85
            }
            text += group
        }
        var parts: [Part] = [.literal(text), .repeated(Array("z".utf8), count: count / 4)]
        // The last 1 to 3 zeros: a group of count + 1 characters of a zero word.
        if count % 4 > 0 { parts.append(.literal([UInt8](repeating: UInt8(ascii: "!"), count: count % 4 + 1))) }
        parts.append(.literal(Array("~>".utf8)))
        return EncodedBytes(parts)
    }

    /// `prefix`, then `count` zeros, as `/LZWDecode` data (early change 1). The prefix is one code
    /// per byte, followed by a clear-table code; then each code after the first adds an entry one
    /// zero longer than the last, until the table is full, and then the longest entry, 3,839
    /// zeros in 12 bits, comes again and again.
    public static func lzw(_ prefix: [UInt8], zeros count: Int) -> [UInt8] {
        var writer = BitWriter()
        var codeLength = 9
        var tableCount = 258
        var first = true
        // Writes a code as wide as the decoder expects it and follows the decoder's table.
        func emit(_ code: Int) {
            writer.write(code, bits: codeLength)
            if !first, tableCount < 4096 { tableCount += 1 }
            first = false
            let limit = tableCount + 1
            if limit >= 512, codeLength < 12, limit >= 1 << codeLength { codeLength += 1 }
        }
        if !prefix.isEmpty {
            for byte in prefix { emit(Int(byte)) }
            writer.write(256, bits: codeLength)
            (codeLength, tableCount, first) = (9, 258, true)
        }
        var left = count
        while left > 0 {
            // The next new entry (or, once the table is full, its last one) is code - 256 zeros.
            let code = min(tableCount, 4095)
            if first {
                emit(0)
                left -= 1
            } else if left >= code - 256 {
                emit(code)
                left -= code - 256
            } else {
                emit(left >= 2 ? 256 + left : 0)
                left = 0
            }
        }
        writer.write(257, bits: codeLength)
        return writer.finished
    }
}

/// Writes codes of any width, most significant bit first.
private struct BitWriter {
    var bytes: [UInt8] = []
    private var buffer = 0
    private var bitCount = 0

    mutating func write(_ value: Int, bits: Int) {
        buffer = buffer << bits | value
        bitCount += bits
        while bitCount >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: buffer >> (bitCount - 8)))
            bitCount -= 8
            buffer &= (1 << bitCount) - 1
        }
    }

    var finished: [UInt8] {
        bitCount > 0 ? bytes + [UInt8(truncatingIfNeeded: buffer << (8 - bitCount))] : bytes
    }
}
