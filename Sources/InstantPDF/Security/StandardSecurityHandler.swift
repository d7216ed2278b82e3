import Crypto
import Foundation
import _CryptoExtras

/// The standard security handler of ISO 32000 (7.6.4 and ISO 32000-2 7.6.4.3): RC4 40–128 bit,
/// AES-128 (revisions 2–4) and AES-256 (revisions 5 and 6), opened with the user or the owner
/// password.
struct StandardSecurityHandler {
    enum Method { case rc4, aes128, aes256, identity }

    let fileKey: [UInt8]
    let streamMethod: Method
    let stringMethod: Method
    /// Whether `/Type /Metadata` streams are encrypted too (`/EncryptMetadata`, default true).
    let encryptsMetadata: Bool

    static let padding: [UInt8] = [
        0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
        0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
    ]

    /// Opens the handler with a password (empty for files that only restrict permissions).
    /// - Throws: ``PDFError/Code/passwordRequired`` when the password is neither the user nor the
    ///   owner password; ``PDFError/Code/unsupportedEncryption`` for other handlers.
    init(encrypt: PDFDictionary, firstID: [UInt8], password: String, resolve: (PDFObject) -> PDFObject) throws(PDFError)
    {
        guard encrypt["Filter"]?.nameValue == "Standard" else {
            throw PDFError(
                .unsupportedEncryption,
                "the PDF uses the security handler /\(encrypt["Filter"]?.nameValue ?? "?"), only /Standard is supported"
            )
        }
        func bytes(_ key: String) -> [UInt8] { [UInt8](resolve(encrypt[key] ?? .null).stringData ?? Data()) }
        let version = resolve(encrypt["V"] ?? .null).intValue ?? 0
        let revision = resolve(encrypt["R"] ?? .null).intValue ?? 2
        let owner = bytes("O")
        let user = bytes("U")
        let permissions = UInt32(bitPattern: Int32(truncatingIfNeeded: resolve(encrypt["P"] ?? .null).intValue ?? 0))
        let encryptMetadata = resolve(encrypt["EncryptMetadata"] ?? .null).boolValue ?? true
        encryptsMetadata = encryptMetadata

        func method(_ filterName: String?) -> Method {
            guard version >= 4 else { return .rc4 }
            guard let filterName, filterName != "Identity" else { return .identity }
            let filters = resolve(encrypt["CF"] ?? .null).dictionaryValue
            let filter = filters.flatMap { resolve($0[filterName] ?? .null).dictionaryValue }
            switch filter?["CFM"]?.nameValue {
            case "AESV2": return .aes128
            case "AESV3": return .aes256
            case "None": return .identity
            default: return .rc4
            }
        }
        streamMethod = method(encrypt["StmF"]?.nameValue)
        stringMethod = method(encrypt["StrF"]?.nameValue)

        if revision >= 5 {
            let passwordBytes = Array(password.utf8.prefix(127))
            guard user.count >= 48, owner.count >= 48 else {
                throw PDFError(.damaged, "the /Encrypt dictionary's /U or /O is too short for AES-256")
            }
            func hash(_ salt: ArraySlice<UInt8>, extra: [UInt8]) -> [UInt8] {
                Self.hashR6(password: passwordBytes, salt: Array(salt), extra: extra, revision: revision)
            }
            if hash(user[32..<40], extra: []) == Array(user[0..<32]) {
                let intermediate = hash(user[40..<48], extra: [])
                fileKey = try Self.unwrap(bytes("UE"), with: intermediate)
            } else if hash(owner[32..<40], extra: Array(user[0..<48])) == Array(owner[0..<32]) {
                let intermediate = hash(owner[40..<48], extra: Array(user[0..<48]))
                fileKey = try Self.unwrap(bytes("OE"), with: intermediate)
            } else {
                throw PDFError(.passwordRequired, "the PDF is encrypted and the password is missing or wrong")
            }
            return
        }

        // Key length in bytes: 5 for revision 2; /Length bits otherwise, and 16 for AES-128 when
        // /Length is missing (writers often leave it out of version 4 dictionaries).
        let declaredBits = resolve(encrypt["Length"] ?? .null).intValue
        let defaultBits = streamMethod == .aes128 || stringMethod == .aes128 ? 128 : 40
        let length = revision == 2 ? 5 : max(5, min(16, (declaredBits ?? defaultBits) / 8))
        func key(for passwordBytes: [UInt8]) -> [UInt8] {
            var input = Array((passwordBytes + Self.padding).prefix(32))
            input += owner.prefix(32)
            input += withUnsafeBytes(of: permissions.littleEndian, Array.init)
            input += firstID
            if revision >= 4, !encryptMetadata { input += [0xFF, 0xFF, 0xFF, 0xFF] }
            var digest = Array(Insecure.MD5.hash(data: input))
            if revision >= 3 {
                for _ in 0..<50 { digest = Array(Insecure.MD5.hash(data: digest.prefix(length))) }
            }
            return Array(digest.prefix(length))
        }
        func isUserKey(_ candidate: [UInt8]) -> Bool {
            if revision == 2 { return RC4.apply(candidate, to: Self.padding) == Array(user.prefix(32)) }
            var value = Array(Insecure.MD5.hash(data: Self.padding + firstID))
            for round in 0..<20 { value = RC4.apply(candidate.map { $0 ^ UInt8(round) }, to: value) }
            return value == Array(user.prefix(16))
        }
        let passwordBytes = Array(password.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }.prefix(32))
        let userKey = key(for: passwordBytes)
        if isUserKey(userKey) {
            fileKey = userKey
            return
        }
        // The owner password decrypts /O into the user password (algorithm 7).
        var ownerDigest = Array(Insecure.MD5.hash(data: Array((passwordBytes + Self.padding).prefix(32))))
        if revision >= 3 { for _ in 0..<50 { ownerDigest = Array(Insecure.MD5.hash(data: ownerDigest)) } }
        let ownerKey = Array(ownerDigest.prefix(length))
        var recovered = Array(owner.prefix(32))
        if revision == 2 {
            recovered = RC4.apply(ownerKey, to: recovered)
        } else {
            for round in stride(from: 19, through: 0, by: -1) {
                recovered = RC4.apply(ownerKey.map { $0 ^ UInt8(round) }, to: recovered)
            }
        }
        let candidate = key(for: recovered)
        guard isUserKey(candidate) else {
            throw PDFError(.passwordRequired, "the PDF is encrypted and the password is missing or wrong")
        }
        fileKey = candidate
    }

    /// Decrypts a string or stream of the object `number generation`.
    func decrypt(_ data: Data, number: Int, generation: Int, isStream: Bool) -> Data {
        let method = isStream ? streamMethod : stringMethod
        let key = objectKey(method, number: number, generation: generation)
        switch method {
        case .identity: return data
        case .rc4: return Data(RC4.apply(key, to: [UInt8](data)))
        case .aes128, .aes256: return Self.aesDecrypt(data, key: key)
        }
    }

    /// Encrypts a string or stream of the object `number generation` for writing, with the same
    /// method and key the file's readers use; AES output starts with a random 16-byte IV.
    func encrypt(_ data: Data, number: Int, generation: Int, isStream: Bool) -> Data {
        let method = isStream ? streamMethod : stringMethod
        let key = objectKey(method, number: number, generation: generation)
        switch method {
        case .identity: return data
        case .rc4: return Data(RC4.apply(key, to: [UInt8](data)))
        case .aes128, .aes256:
            var generator = SystemRandomNumberGenerator()
            let ivBytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            guard let iv = try? AES._CBC.IV(ivBytes: ivBytes),
                let encrypted = try? AES._CBC.encrypt(data, using: SymmetricKey(data: key), iv: iv)
            else { return Data() }
            return Data(ivBytes) + encrypted
        }
    }

    /// The key of one object (algorithm 1 of ISO 32000-1, 7.6.2); AES-256 uses the file key itself.
    private func objectKey(_ method: Method, number: Int, generation: Int) -> [UInt8] {
        guard method == .rc4 || method == .aes128 else { return fileKey }
        var input = fileKey
        input += [UInt8(number & 0xFF), UInt8(number >> 8 & 0xFF), UInt8(number >> 16 & 0xFF)]
        input += [UInt8(generation & 0xFF), UInt8(generation >> 8 & 0xFF)]
        if method == .aes128 { input += Array("sAlT".utf8) }
        return Array(Insecure.MD5.hash(data: input).prefix(min(fileKey.count + 5, 16)))
    }

    /// AES-CBC with the IV in the first 16 bytes and PKCS#7 padding; damaged data decrypts to nothing.
    static func aesDecrypt(_ data: Data, key: [UInt8]) -> Data {
        guard data.count >= 32, data.count % 16 == 0, let iv = try? AES._CBC.IV(ivBytes: Array(data.prefix(16))) else {
            return Data()
        }
        return (try? AES._CBC.decrypt(data.dropFirst(16), using: SymmetricKey(data: key), iv: iv)) ?? Data()
    }

    /// Decrypts /UE or /OE (AES-256, zero IV, no padding) into the file key.
    static func unwrap(_ wrapped: [UInt8], with key: [UInt8]) throws(PDFError) -> [UInt8] {
        guard wrapped.count == 32, let iv = try? AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16)),
            let plain = try? AES._CBC.decrypt(wrapped, using: SymmetricKey(data: key), iv: iv, noPadding: true)
        else { throw PDFError(.damaged, "the /UE or /OE of the /Encrypt dictionary is damaged") }
        return [UInt8](plain)
    }

    /// The password hash of revisions 5 (SHA-256) and 6 (ISO 32000-2 algorithm 2.B).
    static func hashR6(password: [UInt8], salt: [UInt8], extra: [UInt8], revision: Int) -> [UInt8] {
        var k = Array(SHA256.hash(data: password + salt + extra))
        guard revision >= 6 else { return k }
        var round = 0
        while true {
            let k1 = Array((0..<64).map { _ in password + k + extra }.joined())
            guard let iv = try? AES._CBC.IV(ivBytes: Array(k[16..<32])),
                let encrypted = try? AES._CBC.encrypt(k1, using: SymmetricKey(data: k[0..<16]), iv: iv, noPadding: true)
            else { return k }
            let e = [UInt8](encrypted)
            let selector = e.prefix(16).reduce(0) { ($0 + Int($1)) % 3 }
            switch selector {
            case 0: k = Array(SHA256.hash(data: e))
            case 1: k = Array(SHA384.hash(data: e))
            default: k = Array(SHA512.hash(data: e))
            }
            round += 1
            if round >= 64, Int(e.last!) <= round - 32 { break }
        }
        return Array(k.prefix(32))
    }
}

/// The RC4 stream cipher, which PDF encryption of revisions 2–4 uses.
enum RC4 {
    static func apply(_ key: [UInt8], to data: [UInt8]) -> [UInt8] {
        guard !key.isEmpty else { return data }
        var state = [UInt8](0...255)
        var j = 0
        for i in 0..<256 {
            j = (j + Int(state[i]) + Int(key[i % key.count])) & 0xFF
            state.swapAt(i, j)
        }
        var output = [UInt8](repeating: 0, count: data.count)
        var i = 0
        j = 0
        for index in 0..<data.count {
            i = (i + 1) & 0xFF
            j = (j + Int(state[i])) & 0xFF
            state.swapAt(i, j)
            output[index] = data[index] ^ state[(Int(state[i]) + Int(state[j])) & 0xFF]
        }
        return output
    }
}
