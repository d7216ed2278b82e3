import Crypto
import Foundation

extension Data {
    /// The SHA-256 of the bytes as lowercase hex.
    var sha256Hex: String {
        SHA256.hash(data: self).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
        }.joined()
    }
}
