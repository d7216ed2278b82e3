/// How much work reading or writing one PDF may do, so that a few kilobytes of hostile input
/// (a decompression bomb, an image of huge dimensions) cannot make it allocate gigabytes.
///
/// A ``PDFDocument`` keeps one budget for its whole life: every stream it decodes (each filter
/// of a stream's chain, every stream of the file) and every image the writer decodes for it take
/// from the same budget. Open one document per operation (an upload, an export) to give each
/// operation the whole budget.
public struct PDFLimits: Hashable, Sendable {
    /// The most bytes one document may decode, in all: the output of every filter of every
    /// stream it reads (cross-reference streams, object streams, scripts), the objects parsed
    /// from object streams and cross-reference streams (counted at their size in memory), and the
    /// samples of the PNG images the writer decodes.
    ///
    /// The default, 256 MiB, bounds what a bomb can take to a few hundred megabytes per operation,
    /// and is far above what real documents need: no file of the project's corpus of real-world
    /// PDFs takes more than 70 KB, and 5,000 of its annotated pages joined into one file with
    /// object streams (4 MB) take 18 MB. `instant inspect` prints what a file takes.
    public var maxDecodedBytes: Int
    /// The most pixels (width × height) an image the writer decodes may have (PNG attachments of
    /// image annotations), checked before any of its samples are decoded. JPEG attachments are
    /// embedded as they are and not decoded, whatever their size.
    ///
    /// The default, 50 million, is above the resolution of the largest common camera sensors
    /// (48–50 megapixels) and six times a 4K screen. While it is converted, an image takes its
    /// decompressed samples (counted in ``maxDecodedBytes``) and 4 bytes per pixel of color and
    /// alpha: at most 256 MiB + 200 MB with the defaults.
    public var maxImagePixels: Int

    /// The default limits: 256 MiB of decoded bytes, 50 million pixels per image.
    public static let `default` = PDFLimits()

    /// Creates limits; every value must be positive.
    public init(maxDecodedBytes: Int = 256 * 1024 * 1024, maxImagePixels: Int = 50_000_000) {
        precondition(maxDecodedBytes > 0 && maxImagePixels > 0, "PDF limits must be positive")
        self.maxDecodedBytes = maxDecodedBytes
        self.maxImagePixels = maxImagePixels
    }
}

/// One of the ``PDFLimits``, as named by a ``PDFError`` with code ``PDFError/Code/limitExceeded``.
public enum PDFLimit: String, Hashable, Sendable, CaseIterable {
    /// ``PDFLimits/maxDecodedBytes``.
    case decodedBytes
    /// ``PDFLimits/maxImagePixels``.
    case imagePixels
}
