import CZlib
import Foundation

/// Decoding of stream data (ISO 32000-1, 7.4).
enum StreamFilters {
    /// The largest decoded stream accepted, to bound memory on hostile input.
    static let maximumDecodedSize = 512 * 1024 * 1024

    /// Applies the stream's filters in order.
    static func decode(_ stream: PDFStream, resolve: (PDFObject) -> PDFObject) throws(PDFError) -> Data {
        let filters: [String]
        switch resolve(stream.dictionary["Filter"] ?? .null) {
        case .name(let name): filters = [name]
        case .array(let names): filters = names.compactMap { resolve($0).nameValue }
        default: filters = []
        }
        let parameters: [PDFDictionary?]
        switch resolve(stream.dictionary["DecodeParms"] ?? stream.dictionary["DP"] ?? .null) {
        case .dictionary(let dictionary): parameters = [dictionary]
        case .array(let list): parameters = list.map { resolve($0).dictionaryValue }
        default: parameters = []
        }
        var data = stream.rawData
        for (index, filter) in filters.enumerated() {
            let parms = index < parameters.count ? parameters[index] : nil
            data = try apply(filter, to: data, parameters: parms)
        }
        return data
    }

    static func apply(_ filter: String, to data: Data, parameters: PDFDictionary?) throws(PDFError) -> Data {
        switch filter {
        case "FlateDecode", "Fl":
            return try predict(inflate(data), parameters: parameters)
        case "LZWDecode", "LZW":
            let early = parameters?["EarlyChange"]?.intValue ?? 1
            return try predict(lzwDecode(data, earlyChange: early != 0), parameters: parameters)
        case "ASCIIHexDecode", "AHx": return asciiHexDecode(data)
        case "ASCII85Decode", "A85": return try ascii85Decode(data)
        case "RunLengthDecode", "RL": return runLengthDecode(data)
        default:
            throw PDFError(.unsupportedFilter, "the stream filter /\(filter) is not supported by this reader")
        }
    }

    /// Compresses bytes for `/FlateDecode` (zlib format, default level).
    static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { outputBuffer in
            bytes.withUnsafeBufferPointer { inputBuffer in
                compress2(
                    outputBuffer.baseAddress, &capacity, inputBuffer.baseAddress, uLong(inputBuffer.count),
                    Z_DEFAULT_COMPRESSION)
            }
        }
        // compress2 cannot fail with a buffer of compressBound bytes; memory exhaustion traps anyway.
        precondition(status == Z_OK, "zlib compress2 failed with status \(status)")
        output.removeSubrange(Int(capacity)...)
        return output
    }

    static func inflate(_ data: Data) throws(PDFError) -> Data {
        guard !data.isEmpty else { return Data() }
        var stream = z_stream()
        // 32 + 15: accept zlib and gzip headers with the largest window.
        guard inflateInit2_(&stream, 47, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw PDFError(.damaged, "zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var input = [UInt8](data)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    let produced = chunkBuffer.count - Int(stream.avail_out)
                    output.append(chunkBuffer.baseAddress!, count: produced)
                }
            } while status == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0)
                && output.count <= maximumDecodedSize
        }
        if output.count > maximumDecodedSize {
            throw PDFError(.damaged, "a stream decodes to more than \(maximumDecodedSize) bytes")
        }
        // Truncated or slightly damaged data: keep what was decoded, as viewers do.
        if status != Z_STREAM_END && status != Z_OK && status != Z_BUF_ERROR && output.isEmpty {
            throw PDFError(.damaged, "FlateDecode data is damaged (zlib status \(status))")
        }
        return output
    }

    /// PNG (10–15) and TIFF (2) predictors.
    static func predict(_ data: Data, parameters: PDFDictionary?) throws(PDFError) -> Data {
        let predictor = parameters?["Predictor"]?.intValue ?? 1
        guard predictor > 1 else { return data }
        let colors = max(1, parameters?["Colors"]?.intValue ?? 1)
        let bitsPerComponent = max(1, parameters?["BitsPerComponent"]?.intValue ?? 8)
        let columns = max(1, parameters?["Columns"]?.intValue ?? 1)
        let bytesPerPixel = max(1, (colors * bitsPerComponent + 7) / 8)
        let rowLength = (colors * bitsPerComponent * columns + 7) / 8
        let input = [UInt8](data)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        if predictor == 2 {
            guard bitsPerComponent == 8 else { return data }
            var index = 0
            while index < input.count {
                let end = min(index + rowLength, input.count)
                var row = Array(input[index..<end])
                if row.count > bytesPerPixel {
                    for position in bytesPerPixel..<row.count { row[position] &+= row[position - bytesPerPixel] }
                }
                output.append(contentsOf: row)
                index = end
            }
            return Data(output)
        }
        var previous = [UInt8](repeating: 0, count: rowLength)
        var index = 0
        while index < input.count {
            let type = input[index]
            index += 1
            let end = min(index + rowLength, input.count)
            var row = [UInt8](repeating: 0, count: rowLength)
            for position in 0..<(end - index) { row[position] = input[index + position] }
            index = end
            for position in 0..<rowLength {
                let left = position >= bytesPerPixel ? row[position - bytesPerPixel] : 0
                let up = previous[position]
                let upLeft = position >= bytesPerPixel ? previous[position - bytesPerPixel] : 0
                switch type {
                case 1: row[position] &+= left
                case 2: row[position] &+= up
                case 3: row[position] &+= UInt8((Int(left) + Int(up)) / 2)
                case 4:
                    let estimate = Int(left) + Int(up) - Int(upLeft)
                    let distanceLeft = abs(estimate - Int(left))
                    let distanceUp = abs(estimate - Int(up))
                    let distanceUpLeft = abs(estimate - Int(upLeft))
                    let predictorValue =
                        distanceLeft <= distanceUp && distanceLeft <= distanceUpLeft
                        ? left : (distanceUp <= distanceUpLeft ? up : upLeft)
                    row[position] &+= predictorValue
                default: break
                }
            }
            output.append(contentsOf: row)
            previous = row
        }
        return Data(output)
    }

    static func asciiHexDecode(_ data: Data) -> Data {
        var output: [UInt8] = []
        var pending: UInt8?
        for byte in data {
            if byte == UInt8(ascii: ">") { break }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte - UInt8(ascii: "A") + 10
            default: continue
            }
            if let high = pending {
                output.append(high << 4 | value)
                pending = nil
            } else {
                pending = value
            }
        }
        if let pending { output.append(pending << 4) }
        return Data(output)
    }

    static func ascii85Decode(_ data: Data) throws(PDFError) -> Data {
        var output: [UInt8] = []
        var group: [UInt32] = []
        var bytes = [UInt8](data)
        if bytes.starts(with: Array("<~".utf8)) { bytes.removeFirst(2) }
        for byte in bytes {
            if byte == UInt8(ascii: "~") { break }
            if PDFParser.isWhitespace(byte) { continue }
            if byte == UInt8(ascii: "z"), group.isEmpty {
                output.append(contentsOf: [0, 0, 0, 0])
                continue
            }
            guard (UInt8(ascii: "!")...UInt8(ascii: "u")).contains(byte) else {
                throw PDFError(.damaged, "invalid character in ASCII85 data")
            }
            group.append(UInt32(byte - UInt8(ascii: "!")))
            if group.count == 5 {
                let value = group.reduce(UInt64(0)) { $0 * 85 + UInt64($1) }
                let word = UInt32(truncatingIfNeeded: value)
                output.append(contentsOf: [
                    UInt8(word >> 24), UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF),
                ])
                group.removeAll(keepingCapacity: true)
            }
        }
        if group.count > 1 {
            let count = group.count
            while group.count < 5 { group.append(84) }
            let value = group.reduce(UInt64(0)) { $0 * 85 + UInt64($1) }
            let word = UInt32(truncatingIfNeeded: value)
            let word8 = [UInt8(word >> 24), UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
            output.append(contentsOf: word8.prefix(count - 1))
        }
        return Data(output)
    }

    static func runLengthDecode(_ data: Data) -> Data {
        let input = [UInt8](data)
        var output: [UInt8] = []
        var index = 0
        while index < input.count {
            let length = Int(input[index])
            index += 1
            if length == 128 { break }
            if length < 128 {
                let end = min(index + length + 1, input.count)
                output.append(contentsOf: input[index..<end])
                index = end
            } else if index < input.count {
                output.append(contentsOf: repeatElement(input[index], count: 257 - length))
                index += 1
            }
        }
        return Data(output)
    }

    static func lzwDecode(_ data: Data, earlyChange: Bool) throws(PDFError) -> Data {
        let input = [UInt8](data)
        var table: [[UInt8]] = (0..<256).map { [UInt8($0)] } + [[], []]
        var output: [UInt8] = []
        var codeLength = 9
        var bitBuffer = 0
        var bitCount = 0
        var previous: [UInt8]?
        var index = 0
        while true {
            while bitCount < codeLength {
                guard index < input.count else { return Data(output) }
                bitBuffer = (bitBuffer << 8) | Int(input[index])
                bitCount += 8
                index += 1
            }
            let code = (bitBuffer >> (bitCount - codeLength)) & ((1 << codeLength) - 1)
            bitCount -= codeLength
            bitBuffer &= (1 << bitCount) - 1
            if code == 256 {
                table.removeSubrange(258...)
                codeLength = 9
                previous = nil
                continue
            }
            if code == 257 { break }
            let entry: [UInt8]
            if code < table.count {
                entry = table[code]
            } else if let previous, code == table.count {
                entry = previous + [previous[0]]
            } else {
                throw PDFError(.damaged, "invalid LZW code")
            }
            output.append(contentsOf: entry)
            if let previous, table.count < 4096 { table.append(previous + [entry[0]]) }
            previous = entry
            let limit = table.count + (earlyChange ? 1 : 0)
            if limit >= 512, codeLength < 12, limit >= 1 << codeLength { codeLength += 1 }
            if output.count > maximumDecodedSize { throw PDFError(.damaged, "LZW data decodes to too many bytes") }
        }
        return Data(output)
    }
}
