import Foundation

/// What a document may still decode under its ``PDFLimits``: one budget for every filter of every
/// stream and for every image, shared by the reader and the writer of the document.
///
/// The first time a limit is exceeded the budget keeps the error, and every later request fails
/// at once with it: the reader treats a stream it cannot decode as missing (as damaged files
/// need), so a bomb costs no more than the budget, and the document's public operations report
/// the kept error instead of a silently incomplete result. Safe to use from several threads.
final class DecodeBudget: @unchecked Sendable {
    let limits: PDFLimits
    private let lock = NSLock()
    private var spent = 0
    private var refusal: PDFError?

    init(limits: PDFLimits) { self.limits = limits }

    /// The bytes that may still be decoded; 0 once a limit has been exceeded.
    var remaining: Int {
        lock.lock()
        defer { lock.unlock() }
        return refusal == nil ? limits.maxDecodedBytes - spent : 0
    }

    /// The bytes decoded so far.
    var decodedBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return spent
    }

    /// The first limit that was exceeded, or `nil`.
    var exceeded: PDFError? {
        lock.lock()
        defer { lock.unlock() }
        return refusal
    }

    /// Throws the first limit that was exceeded, if any.
    func check() throws(PDFError) {
        if let exceeded { throw exceeded }
    }

    /// Takes `bytes` that were decoded from the budget.
    ///
    /// - Throws: the ``PDFLimit/decodedBytes`` error when fewer bytes remain (or a limit was
    ///   exceeded before).
    func spend(_ bytes: Int) throws(PDFError) {
        lock.lock()
        defer { lock.unlock() }
        if let refusal { throw refusal }
        guard bytes <= limits.maxDecodedBytes - spent else { throw refuseLocked(decodedBytesError()) }
        spent += bytes
    }

    /// Records that decoding would go over ``PDFLimits/maxDecodedBytes`` and returns the error
    /// to throw (the first one recorded, if a limit was exceeded before).
    func refuseDecoding() -> PDFError {
        lock.lock()
        defer { lock.unlock() }
        return refuseLocked(decodedBytesError())
    }

    /// Checks the dimensions of an image before any of its samples are decoded.
    ///
    /// - Throws: the ``PDFLimit/imagePixels`` error for an image of more than
    ///   ``PDFLimits/maxImagePixels`` pixels (or a product that does not even fit an `Int`).
    func checkImage(width: Int, height: Int, what: String) throws(PDFError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard overflow || pixels > limits.maxImagePixels else { return }
        lock.lock()
        defer { lock.unlock() }
        throw refuseLocked(
            PDFError(
                exceeding: .imagePixels,
                "\(what) has \(width) × \(height) pixels, more than the limit of \(limits.maxImagePixels) pixels "
                    + "per image"))
    }

    private func decodedBytesError() -> PDFError {
        PDFError(
            exceeding: .decodedBytes,
            "decoding this PDF and its images takes more than \(limits.maxDecodedBytes) bytes, the limit of decoded "
                + "bytes for one document")
    }

    private func refuseLocked(_ error: PDFError) -> PDFError {
        if let refusal { return refusal }
        refusal = error
        return error
    }
}
