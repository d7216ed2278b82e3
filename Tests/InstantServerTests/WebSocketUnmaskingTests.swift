import NIOCore
import NIOWebSocket
import Testing

@testable import InstantServer

/// The server unmasks what clients send on the listening WebSocket eight bytes at a time: the
/// same bytes as NIO's byte-by-byte unmasking, for every length and wherever the data begins.
@Suite("Unmasking WebSocket frames")
struct WebSocketUnmaskingTests {
    /// A frame as the decoder makes it of a client's masked frame: its data is a slice of what was
    /// read, `offset` bytes into it.
    static func receivedFrame(_ plain: [UInt8], key: WebSocketMaskingKey, offset: Int) -> WebSocketFrame {
        var read = ByteBuffer(repeating: 0xEE, count: offset)
        read.writeBytes(plain.enumerated().map { $0.element ^ key[$0.offset % 4] })
        read.moveReaderIndex(forwardBy: offset)
        return WebSocketFrame(fin: true, opcode: .text, maskKey: key, data: read)
    }

    @Test(arguments: [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 255, 16_384, 40_003])
    func theUnmaskedPayloadIsTheClientsBytes(length: Int) throws {
        let plain = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let key = try #require(WebSocketMaskingKey([0x12, 0xA5, 0x00, 0xFF]))
        for offset in [0, 1, 5] {
            let frame = Self.receivedFrame(plain, key: key, offset: offset)
            let unmasked = frame.unmaskedPayload
            #expect(Array(unmasked.readableBytesView) == plain, "length \(length), offset \(offset)")
            #expect(unmasked == frame.unmaskedData)
            // The frame keeps its data as received.
            #expect(frame.data.readableBytes == length)
        }
    }

    /// With extension data (which the mask covers first), NIO's unmasking is used.
    @Test func aFrameWithExtensionDataIsUnmaskedAsNIODoes() throws {
        let key = try #require(WebSocketMaskingKey([0x01, 0x02, 0x03, 0x04]))
        let frame = WebSocketFrame(
            fin: true, rsv1: true, opcode: .text, maskKey: key,
            data: ByteBuffer(bytes: [0x61, 0x62, 0x63, 0x64, 0x65]),
            extensionData: ByteBuffer(bytes: [0x10, 0x20, 0x30]))
        #expect(frame.unmaskedPayload == frame.unmaskedData)
    }

    @Test func aFrameWithoutAMaskIsTakenAsItIs() {
        let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "{\"revision\":3}"))
        #expect(String(buffer: frame.unmaskedPayload) == "{\"revision\":3}")
    }
}
