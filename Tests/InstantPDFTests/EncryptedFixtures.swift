import Crypto
import Foundation
import InstantTesting
import _CryptoExtras

@testable import InstantPDF

/// One-page PDFs encrypted by the standard security handler with the passwords a test chooses:
/// `/O` and `/U` (and `/OE`, `/UE`, `/Perms` for AES-256) computed by the algorithms of ISO 32000-1
/// 7.6.3 and ISO 32000-2 7.6.4.4, the title and the page's content stream encrypted.
///
/// Files made by other tools are read by the corpus tests (`EncryptionTests`).
enum EncryptedFixtures {
    /// An encryption method of the standard security handler, with its revision.
    enum Method: String, Sendable, CaseIterable, CustomStringConvertible {
        /// RC4 with a 128-bit key, revision 3.
        case rc4
        /// AES-128 (`/AESV2`), revision 4.
        case aes128
        /// AES-256 (`/AESV3`), revision 6.
        case aes256

        var description: String { rawValue }
    }

    /// The title in the `/Info` dictionary, encrypted in the file.
    static let title = "Encrypted test page"
    /// The page's content stream, encrypted in the file.
    static let content = "0 0 1 RG 72 720 m 540 720 l S"
    /// The object number of the page, which `/Kids` lists as `[4 0 R]`.
    static let pageNumber = 4
    /// The object number of the `/Encrypt` dictionary.
    static let encryptionNumber = 6
    /// The permissions (`/P`): everything allowed.
    static let permissions: Int32 = -4

    /// A one-page PDF encrypted with `method`, opened by `userPassword` (empty: by anyone) or by
    /// `ownerPassword`.
    static func make(_ method: Method, userPassword: String, ownerPassword: String) throws -> Data {
        let firstID = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let encrypt = try dictionary(method, user: userPassword, owner: ownerPassword, firstID: firstID)
        let handler = try StandardSecurityHandler(
            encrypt: encrypt, firstID: firstID, password: userPassword, resolve: { $0 })
        let encryptedTitle = handler.encrypt(Data(title.utf8), number: 3, generation: 0, isStream: false)
        let encryptedContent = handler.encrypt(Data(content.utf8), number: 5, generation: 0, isStream: true)
        let objects: [PDFObject] = [
            .dictionary(PDFDictionary(["Type": .name("Catalog"), "Pages": reference(2)])),
            .dictionary(PDFDictionary(["Type": .name("Pages"), "Kids": .array([reference(4)]), "Count": .integer(1)])),
            .dictionary(PDFDictionary(["Title": .string(encryptedTitle)])),
            .dictionary(
                PDFDictionary([
                    "Type": .name("Page"), "Parent": reference(2), "Contents": reference(5),
                    "MediaBox": .array([0, 0, 612, 792].map(PDFObject.integer)),
                ])),
            .stream(PDFStream(dictionary: PDFDictionary(), rawData: encryptedContent)),
            .dictionary(encrypt),
        ]
        let identifier = String(decoding: PDFSerializer.bytes(.string(Data(firstID))), as: UTF8.self)
        let trailer = "/Root 1 0 R /Info 3 0 R /Encrypt \(encryptionNumber) 0 R /ID [\(identifier) \(identifier)]"
        return TestPDF.assemble(objects.map { Data(PDFSerializer.bytes($0)) }, trailer: trailer)
    }

    /// A reference to object `number`.
    private static func reference(_ number: Int) -> PDFObject {
        .reference(PDFReference(number: number, generation: 0))
    }

    /// The `/Encrypt` dictionary for the passwords.
    private static func dictionary(_ method: Method, user: String, owner: String, firstID: [UInt8]) throws
        -> PDFDictionary
    {
        var encrypt = PDFDictionary(["Filter": .name("Standard"), "P": .integer(Int(permissions))])
        switch method {
        case .rc4:
            encrypt["V"] = .integer(2)
            encrypt["R"] = .integer(3)
            encrypt["Length"] = .integer(128)
            let (ownerEntry, userEntry) = rc4Entries(user: user, owner: owner, firstID: firstID)
            encrypt["O"] = .string(Data(ownerEntry))
            encrypt["U"] = .string(Data(userEntry))
        case .aes128:
            encrypt["V"] = .integer(4)
            encrypt["R"] = .integer(4)
            encrypt["Length"] = .integer(128)
            encrypt["CF"] = .dictionary(PDFDictionary(["StdCF": cryptFilter("AESV2", length: 16)]))
            encrypt["StmF"] = .name("StdCF")
            encrypt["StrF"] = .name("StdCF")
            let (ownerEntry, userEntry) = rc4Entries(user: user, owner: owner, firstID: firstID)
            encrypt["O"] = .string(Data(ownerEntry))
            encrypt["U"] = .string(Data(userEntry))
        case .aes256:
            encrypt["V"] = .integer(5)
            encrypt["R"] = .integer(6)
            encrypt["Length"] = .integer(256)
            encrypt["CF"] = .dictionary(PDFDictionary(["StdCF": cryptFilter("AESV3", length: 32)]))
            encrypt["StmF"] = .name("StdCF")
            encrypt["StrF"] = .name("StdCF")
            for (key, value) in try aes256Entries(user: user, owner: owner) { encrypt[key] = .string(Data(value)) }
        }
        return encrypt
    }

    /// A crypt filter dictionary for `/CF`.
    private static func cryptFilter(_ method: String, length: Int) -> PDFObject {
        .dictionary(
            PDFDictionary([
                "CFM": .name(method), "AuthEvent": .name("DocOpen"), "Length": .integer(length),
            ]))
    }

    /// `/O` (algorithm 3) and `/U` (algorithms 2 and 5) of revisions 3 and 4 with encrypted
    /// metadata, for a 128-bit key.
    private static func rc4Entries(user: String, owner: String, firstID: [UInt8]) -> (
        owner: [UInt8], user: [UInt8]
    ) {
        func padded(_ password: String) -> [UInt8] {
            Array((Array(password.utf8) + StandardSecurityHandler.padding).prefix(32))
        }
        func md5(_ bytes: [UInt8]) -> [UInt8] { Array(Insecure.MD5.hash(data: bytes)) }
        /// RC4 with the key, then 19 more times with the key's bytes XORed with 1 to 19.
        func twentyRounds(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
            (0..<20).reduce(data) { value, round in RC4.apply(key.map { $0 ^ UInt8(round) }, to: value) }
        }
        var ownerDigest = md5(padded(owner.isEmpty ? user : owner))
        for _ in 0..<50 { ownerDigest = md5(ownerDigest) }
        let ownerEntry = twentyRounds(ownerDigest, padded(user))

        var input = padded(user) + ownerEntry
        input += withUnsafeBytes(of: UInt32(bitPattern: permissions).littleEndian, Array.init)
        input += firstID
        var fileKey = md5(input)
        for _ in 0..<50 { fileKey = md5(fileKey) }
        let userEntry = twentyRounds(fileKey, md5(StandardSecurityHandler.padding + firstID))
        return (ownerEntry, userEntry + [UInt8](repeating: 0, count: 16))
    }

    /// `/U`, `/UE`, `/O`, `/OE` and `/Perms` of revision 6 (ISO 32000-2, algorithms 8 to 10) for a
    /// random 256-bit file key.
    private static func aes256Entries(user: String, owner: String) throws -> [String: [UInt8]] {
        func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }
        func hash(_ password: String, _ salt: [UInt8], _ extra: [UInt8]) -> [UInt8] {
            StandardSecurityHandler.hashR6(
                password: Array(password.utf8.prefix(127)), salt: salt, extra: extra, revision: 6)
        }
        /// AES-256 in CBC mode with a zero IV and no padding (one block of it is ECB).
        func wrap(_ data: [UInt8], key: [UInt8]) throws -> [UInt8] {
            let iv = try AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16))
            return [UInt8](try AES._CBC.encrypt(data, using: SymmetricKey(data: key), iv: iv, noPadding: true))
        }
        let fileKey = random(32)
        let (userValidation, userKeySalt) = (random(8), random(8))
        let userEntry = hash(user, userValidation, []) + userValidation + userKeySalt
        let (ownerValidation, ownerKeySalt) = (random(8), random(8))
        let ownerEntry = hash(owner, ownerValidation, userEntry) + ownerValidation + ownerKeySalt
        let permissionBlock =
            withUnsafeBytes(of: permissions.littleEndian, Array.init) + [0xFF, 0xFF, 0xFF, 0xFF]
            + Array("Tadb".utf8) + random(4)
        return [
            "U": userEntry, "UE": try wrap(fileKey, key: hash(user, userKeySalt, [])),
            "O": ownerEntry, "OE": try wrap(fileKey, key: hash(owner, ownerKeySalt, userEntry)),
            "Perms": try wrap(permissionBlock, key: fileKey),
        ]
    }
}
