import NIOCore
import NIOWebSocket

extension WebSocketFrame {
    /// The frame's data unmasked into a buffer of its own, eight bytes at a time.
    ///
    /// Every frame a client sends is masked. NIO's `unmaskedData` copies the data, then unmasks
    /// the copy byte by byte, which for the sync requests clients send on the socket (tens of
    /// kilobytes each) was 1.2% of the server's processor time in the 100-change throughput
    /// benchmark. Frames with extension data (no extension is negotiated here) go through NIO's.
    var unmaskedPayload: ByteBuffer {
        guard let maskKey, extensionData == nil else { return unmaskedData }
        let key = (maskKey[0], maskKey[1], maskKey[2], maskKey[3])
        // The key four times over as it lies in memory, so that it applies to eight bytes loaded
        // as one integer, whatever the machine's byte order.
        let wideKey = withUnsafeBytes(of: (key, key)) { $0.loadUnaligned(as: UInt64.self) }
        let count = data.readableBytes
        var unmasked = ByteBufferAllocator().buffer(capacity: count)
        _ = data.withUnsafeReadableBytes { masked in
            unmasked.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { output in
                var index = 0
                while index + 8 <= count {
                    let word = masked.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ wideKey
                    output.storeBytes(of: word, toByteOffset: index, as: UInt64.self)
                    index += 8
                }
                while index < count {
                    output[index] = masked[index] ^ maskKey[index % 4]
                    index += 1
                }
                return count
            }
        }
        return unmasked
    }
}
