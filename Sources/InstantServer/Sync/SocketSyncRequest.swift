import Foundation
import InstantJSON
import NIOCore

/// A sync request sent on a listening WebSocket: `{"requestId": "7", "sync": {...}}`, where `sync`
/// is the body of `POST …/sync` and `requestId` (a string of at most 64 bytes, or an integer) comes
/// back with the answer, `{"requestId": "7", "answer": {...}}`, or with the error, `{"requestId":
/// "7", "error": {"status": 400, "reason": "..."}}` (docs/PROTOCOL.md).
struct SocketSyncRequest: Sendable {
    /// The client's name for the request, sent back with its answer.
    var requestID: JSONValue
    /// The sync request.
    var sync: SyncRequest

    /// The longest string request id, in UTF-8 bytes.
    static let maximumRequestIDLength = 64

    /// Reads a message.
    /// - Throws: ``Failure`` with the request id when the message had a usable one.
    init(_ text: ByteBuffer, maxChanges: Int) throws(Failure) {
        let message: JSONValue
        do {
            message = try JSONValue.parse(Data(text.readableBytesView))
        } catch {
            throw Failure(requestID: .null, error: .badRequest("The message is not JSON: \(error)"))
        }
        guard message.objectValue != nil else {
            throw Failure(requestID: .null, error: .badRequest(#"Expected an object {"requestId", "sync"}."#))
        }
        let requestID = message["requestId"] ?? .null
        switch requestID {
        case .integer: break
        case .string(let id) where !id.isEmpty && id.utf8.count <= Self.maximumRequestIDLength: break
        default:
            throw Failure(
                requestID: .null,
                error: .badRequest(
                    "requestId: expected a string of 1 to \(Self.maximumRequestIDLength) bytes or an integer, "
                        + "which comes back with the answer."))
        }
        self.requestID = requestID
        guard let body = message["sync"] else {
            throw Failure(
                requestID: requestID, error: .badRequest("sync: expected the body of a sync request, an object."))
        }
        do {
            sync = try SyncRequest(body, maxChanges: maxChanges)
        } catch {
            throw Failure(requestID: requestID, error: error)
        }
    }

    /// A message that could not be read, with what to answer it with.
    struct Failure: Error {
        var requestID: JSONValue
        var error: APIError
    }

    /// What encloses the answer to the request, `{"requestId": ..., "answer": {...}}`: the answer is
    /// written into it (``InstantAPI/sync(_:size:token:enclosedIn:logger:)``), not copied there
    /// afterwards, for it can carry megabytes of records.
    var answerEnvelope: InstantAPI.AnswerEnvelope {
        var opening = ByteBuffer()
        opening.writeString(#"{"requestId":"#)
        opening.writeBytes(requestID.serialized())
        opening.writeString(#","answer":"#)
        return InstantAPI.AnswerEnvelope(opening: opening, closing: "}")
    }

    /// `{"requestId": ..., "error": {"status": 400, "reason": "..."}}`
    static func failure(_ error: APIError, to requestID: JSONValue) -> ByteBuffer {
        let message: JSONValue = [
            "requestId": requestID,
            "error": ["status": .integer(Int64(error.status.code)), "reason": .string(error.reason)],
        ]
        return ByteBuffer(bytes: message.serialized())
    }
}
