import CZlib
import Foundation

/// Decoding of stream data (ISO 32000-1, 7.4).
///
/// Every filter writes into ``DecodedBytes`` that take from the document's ``DecodeBudget``: each
/// step of a chain and every stream of the document share one budget, and no filter ever holds
/// more output than the budget has left, however much its input would expand.
enum StreamFilters {
    /// Applies the stream's filters in order.
    ///
    /// - Throws: ``PDFError`` with code ``PDFError/Code/limitExceeded`` when the decoded bytes
    ///   would go over the budget, ``PDFError/Code/unsupportedFilter`` for filters this reader
    ///   does not decode, ``PDFError/Code/damaged`` for data that cannot be decoded.
    static func decode(
        _ stream: PDFStream, resolve: (PDFObject) -> PDFObject, budget: DecodeBudget
    ) throws(PDFError) -> [UInt8] {
        try budget.check()
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
        var data = [UInt8](stream.rawData)
        for (index, filter) in filters.enumerated() {
            let parms = index < parameters.count ? parameters[index] : nil
            data = try apply(filter, to: data, parameters: parms, budget: budget)
        }
        return data
    }

    static func apply(
        _ filter: String, to data: [UInt8], parameters: PDFDictionary?, budget: DecodeBudget
    ) throws(PDFError) -> [UInt8] {
        switch filter {
        case "FlateDecode", "Fl":
            return try predict(inflate(data, budget: budget), parameters: parameters, budget: budget)
        case "LZWDecode", "LZW":
            let early = parameters?["EarlyChange"]?.intValue ?? 1
            return try predict(
                lzwDecode(data, earlyChange: early != 0, budget: budget), parameters: parameters, budget: budget)
        case "ASCIIHexDecode", "AHx": return try asciiHexDecode(data, budget: budget)
        case "ASCII85Decode", "A85": return try ascii85Decode(data, budget: budget)
        case "RunLengthDecode", "RL": return try runLengthDecode(data, budget: budget)
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

    /// zlib or gzip data, inflated chunk by chunk into output bounded by the budget.
    ///
    /// - Parameter expected: the size the caller expects, reserved up front (an image's samples).
    static func inflate(_ input: [UInt8], budget: DecodeBudget, expected: Int = 0) throws(PDFError) -> [UInt8] {
        guard !input.isEmpty else { return [] }
        var output = DecodedBytes(budget: budget, expected: expected)
        var stream = z_stream()
        // 32 + 15: accept zlib and gzip headers with the largest window.
        guard inflateInit2_(&stream, 47, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw PDFError(.damaged, "zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var status: Int32 = Z_OK
        var consumed = 0
        repeat {
            let produced = input.withUnsafeBufferPointer { inputBuffer in
                chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress! + consumed)
                    stream.avail_in = uInt(min(inputBuffer.count - consumed, Int(UInt32.max)))
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    let availableBefore = Int(stream.avail_in)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    consumed += availableBefore - Int(stream.avail_in)
                    return chunkBuffer.count - Int(stream.avail_out)
                }
            }
            try output.append(contentsOf: chunk[0..<produced])
        } while status == Z_OK && (consumed < input.count || stream.avail_out == 0)
        // Truncated or slightly damaged data: keep what was decoded, as viewers do.
        if status != Z_STREAM_END && status != Z_OK && status != Z_BUF_ERROR && output.count == 0 {
            throw PDFError(.damaged, "FlateDecode data is damaged (zlib status \(status))")
        }
        return try output.finish()
    }

    /// PNG (10–15) and TIFF (2) predictors.
    static func predict(_ data: [UInt8], parameters: PDFDictionary?, budget: DecodeBudget) throws(PDFError) -> [UInt8] {
        let predictor = parameters?["Predictor"]?.intValue ?? 1
        guard predictor > 1 else { return data }
        let colors = max(1, parameters?["Colors"]?.intValue ?? 1)
        let bitsPerComponent = max(1, parameters?["BitsPerComponent"]?.intValue ?? 8)
        let columns = max(1, parameters?["Columns"]?.intValue ?? 1)
        // Hostile values must neither overflow the row length nor allocate a huge first row.
        let (bitsPerPixel, pixelOverflow) = colors.multipliedReportingOverflow(by: bitsPerComponent)
        let (rowBits, rowOverflow) = bitsPerPixel.multipliedReportingOverflow(by: columns)
        var output = DecodedBytes(budget: budget, expected: data.count)
        guard !pixelOverflow, !rowOverflow, output.hasRoom(for: rowBits / 8 + 1) else {
            throw budget.refuseDecoding()
        }
        let bytesPerPixel = max(1, (bitsPerPixel + 7) / 8)
        let rowLength = (rowBits + 7) / 8
        if predictor == 2 {
            guard bitsPerComponent == 8 else { return data }
            var index = 0
            while index < data.count {
                let end = min(index + rowLength, data.count)
                var row = Array(data[index..<end])
                if row.count > bytesPerPixel {
                    for position in bytesPerPixel..<row.count { row[position] &+= row[position - bytesPerPixel] }
                }
                try output.append(contentsOf: row)
                index = end
            }
            return try output.finish()
        }
        var previous = [UInt8](repeating: 0, count: rowLength)
        var index = 0
        while index < data.count {
            try output.requireRoom(for: rowLength)
            let type = data[index]
            index += 1
            let end = min(index + rowLength, data.count)
            var row = [UInt8](repeating: 0, count: rowLength)
            for position in 0..<(end - index) { row[position] = data[index + position] }
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
            try output.append(contentsOf: row)
            previous = row
        }
        return try output.finish()
    }

    static func asciiHexDecode(_ data: [UInt8], budget: DecodeBudget) throws(PDFError) -> [UInt8] {
        var output = DecodedBytes(budget: budget, expected: data.count / 2)
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
                try output.append(high << 4 | value)
                pending = nil
            } else {
                pending = value
            }
        }
        if let pending { try output.append(pending << 4) }
        return try output.finish()
    }

    static func ascii85Decode(_ data: [UInt8], budget: DecodeBudget) throws(PDFError) -> [UInt8] {
        var output = DecodedBytes(budget: budget, expected: data.count / 5 * 4)
        var group: [UInt32] = []
        let bytes = data.starts(with: Array("<~".utf8)) ? data.dropFirst(2) : data[...]
        func word(_ group: [UInt32]) -> [UInt8] {
            let value = UInt32(truncatingIfNeeded: group.reduce(UInt64(0)) { $0 * 85 + UInt64($1) })
            return [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        for byte in bytes {
            if byte == UInt8(ascii: "~") { break }
            if PDFParser.isWhitespace(byte) { continue }
            if byte == UInt8(ascii: "z"), group.isEmpty {
                try output.append(0, count: 4)
                continue
            }
            guard (UInt8(ascii: "!")...UInt8(ascii: "u")).contains(byte) else {
                throw PDFError(.damaged, "invalid character in ASCII85 data")
            }
            group.append(UInt32(byte - UInt8(ascii: "!")))
            if group.count == 5 {
                try output.append(contentsOf: word(group))
                group.removeAll(keepingCapacity: true)
            }
        }
        if group.count > 1 {
            let count = group.count
            while group.count < 5 { group.append(84) }
            try output.append(contentsOf: word(group).prefix(count - 1))
        }
        return try output.finish()
    }

    static func runLengthDecode(_ input: [UInt8], budget: DecodeBudget) throws(PDFError) -> [UInt8] {
        var output = DecodedBytes(budget: budget, expected: input.count)
        var index = 0
        while index < input.count {
            let length = Int(input[index])
            index += 1
            if length == 128 { break }
            if length < 128 {
                let end = min(index + length + 1, input.count)
                try output.append(contentsOf: input[index..<end])
                index = end
            } else if index < input.count {
                try output.append(input[index], count: 257 - length)
                index += 1
            }
        }
        return try output.finish()
    }

    static func lzwDecode(_ input: [UInt8], earlyChange: Bool, budget: DecodeBudget) throws(PDFError) -> [UInt8] {
        var table: [[UInt8]] = (0..<256).map { [UInt8($0)] } + [[], []]
        var output = DecodedBytes(budget: budget, expected: input.count)
        var codeLength = 9
        var bitBuffer = 0
        var bitCount = 0
        var previous: [UInt8]?
        var index = 0
        decoding: while true {
            while bitCount < codeLength {
                guard index < input.count else { break decoding }
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
            try output.append(contentsOf: entry)
            if let previous, table.count < 4096 { table.append(previous + [entry[0]]) }
            previous = entry
            let limit = table.count + (earlyChange ? 1 : 0)
            if limit >= 512, codeLength < 12, limit >= 1 << codeLength { codeLength += 1 }
        }
        return try output.finish()
    }
}
