import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

/// A few kilobytes of PDF or PNG must not make the reader or the writer allocate gigabytes: every
/// filter of every stream, and every image, takes from one budget per document (issue 13,
/// finding 2). The bombs expand to far more than the small limits the tests set, but to little
/// enough that the code without a budget would decode them whole and pass the tests.
@Suite("Decompression bombs")
struct DecompressionBombTests {
    /// Limits far below what the bombs decode to.
    static let small = PDFLimits(maxDecodedBytes: 4 << 20, maxImagePixels: 10_000)
    static let mebibyte = 1 << 20

    /// Opens the PDF and reads its originals, as an upload does: the limit it ran into, if any, and
    /// what it decoded.
    /// Making the bomb and reading it run on a thread of their own (``onOwnThread(_:)``).
    static func read(_ data: @escaping @autoclosure @Sendable () -> Data, limits: PDFLimits = small) async -> (
        refusal: PDFError?, decoded: Int
    ) {
        await onOwnThread { () -> (refusal: PDFError?, decoded: Int) in
            do throws(PDFError) {
                let document = try PDFDocument(data: data(), limits: limits)
                _ = document.originalRecords()
                return (document.exceededLimit, document.decodedByteCount)
            } catch {
                return (error, 0)
            }
        }
    }

    /// Expects the PDF to be refused for decoding too much, having decoded no more than the limit.
    static func expectRefused(
        _ data: @escaping @autoclosure @Sendable () -> Data, limits: PDFLimits = small,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let (refusal, decoded) = await read(data(), limits: limits)
        #expect(refusal?.code == .limitExceeded, sourceLocation: sourceLocation)
        #expect(refusal?.limit == .decodedBytes, sourceLocation: sourceLocation)
        #expect(refusal?.message.contains("\(limits.maxDecodedBytes) bytes") == true, sourceLocation: sourceLocation)
        #expect(decoded <= limits.maxDecodedBytes, sourceLocation: sourceLocation)
    }

    /// RunLengthDecode had no cap at all: 2 bytes of it make 128.
    @Test func runLengthBehindFlateIsBounded() async {
        await Self.expectRefused(
            HostilePDF.objectStreams([.init([.flate, .runLength], decodedSize: 64 * Self.mebibyte)]))
    }

    /// ASCII85Decode had no cap either: `z` makes 4 zero bytes.
    @Test func ascii85BehindFlateIsBounded() async {
        await Self.expectRefused(
            HostilePDF.objectStreams([.init([.flate, .ascii85], decodedSize: 64 * Self.mebibyte)]))
    }

    /// LZW codes of 12 bits make up to 3,839 bytes each.
    @Test func lzwIsBounded() async {
        await Self.expectRefused(HostilePDF.objectStreams([.init([.lzw], decodedSize: 64 * Self.mebibyte)]))
    }

    /// A chain of filters nested three deep, each multiplying the one before: refused at the
    /// budget, at the small limit as at the default one (where the stream would decode to 16 GiB).
    @Test func nestedChainsStopAtTheBudget() async throws {
        let small = await Self.read(
            HostilePDF.objectStreams([.init([.flate, .flate, .runLength], decodedSize: 1 << 30)]))
        #expect(small.decoded <= Self.small.maxDecodedBytes)
        // Without a budget the next one would take 16 GiB: stop here then.
        try #require(small.refusal?.limit == .decodedBytes)
        let (refusal, decoded) = await Self.read(
            HostilePDF.objectStreams([.init([.flate, .flate, .runLength], decodedSize: 16 << 30)]), limits: .default)
        try #require(refusal?.limit == .decodedBytes)
        #expect(decoded <= PDFLimits.default.maxDecodedBytes)
    }

    /// Each filter of a chain stays below the limit, but together they go over it: the budget is
    /// the chain's, not each filter's. Below the limit the same chain decodes.
    @Test func theFiltersOfAStreamShareOneBudget() async {
        // The ASCII85 text is a quarter of its output: 0.225 + 0.9 of the limit.
        let limit = Self.small.maxDecodedBytes
        await Self.expectRefused(HostilePDF.objectStreams([.init([.flate, .ascii85], decodedSize: limit / 10 * 9)]))
        let (refusal, decoded) = await Self.read(
            HostilePDF.objectStreams([.init([.flate, .ascii85], decodedSize: limit / 2)]))
        #expect(refusal == nil)
        #expect(decoded >= limit / 2)
    }

    /// Each stream stays below the limit, but together they go over it: the budget is the
    /// document's, not each stream's.
    @Test func theStreamsOfADocumentShareOneBudget() async {
        let bomb = HostilePDF.Bomb([.flate], decodedSize: Self.small.maxDecodedBytes / 3)
        await Self.expectRefused(HostilePDF.objectStreams(Array(repeating: bomb, count: 4)))
        #expect(await Self.read(HostilePDF.objectStreams(Array(repeating: bomb, count: 2))).refusal == nil)
    }

    /// A PNG predictor makes a whole row of `/Columns` bytes out of a short input: a row wider
    /// than the budget is refused before it is allocated.
    @Test func predictorRowsAreBounded() async {
        let wide = HostilePDF.Bomb([.flate], decodedSize: 2, parameters: "<< /Predictor 12 /Columns 50000000 >>")
        await Self.expectRefused(HostilePDF.objectStreams([wide]))
        let rows = HostilePDF.Bomb([.flate], decodedSize: 1 << 16, parameters: "<< /Predictor 12 /Columns 999 >>")
        await Self.expectRefused(HostilePDF.objectStreams(Array(repeating: rows, count: 100)))
    }

    /// Predictor parameters whose product does not fit an integer are refused, not trapped on.
    @Test func predictorParametersCannotOverflow() async {
        let huge = HostilePDF.Bomb(
            [.flate], decodedSize: 2,
            parameters: "<< /Predictor 12 /Colors 999999999999999999 /BitsPerComponent 16 /Columns 4 >>")
        await Self.expectRefused(HostilePDF.objectStreams([huge]), limits: .default)
    }

    /// Each entry of a cross-reference stream takes some 64 bytes of memory for a byte or so of
    /// decoded data: the entries count against the budget at their size in memory.
    @Test func crossReferenceEntriesCountAgainstTheBudget() async {
        await Self.expectRefused(HostilePDF.crossReferenceEntries(500_000))
        #expect(await Self.read(HostilePDF.crossReferenceEntries(10_000)).refusal == nil)
    }

    /// Every object of an object stream can point at the same large object: each parse counts.
    @Test func repeatedObjectsOfAnObjectStreamCountAgainstTheBudget() async {
        await Self.expectRefused(HostilePDF.objectStreamRepeats(2_000, elements: 2_000))
        #expect(await Self.read(HostilePDF.objectStreamRepeats(20, elements: 2_000)).refusal == nil)
    }

    /// An image annotation whose PNG attachment is `png`, written into a one-page PDF.
    static func write(_ png: Data, limits: PDFLimits) throws(PDFError) -> PDFDocument {
        let document = try PDFDocument(data: HostilePDF.objectStreams([]), limits: limits)
        var image = Annotation(type: .image, pageIndex: 0, bbox: Rect(left: 10, top: 10, width: 100, height: 100))
        image.id = "image"
        image.imageAttachmentId = "png"
        _ = try document.writing(InstantDocumentJSON(annotations: [image]), attachments: ["png": png])
        return document
    }

    /// A palette PNG of 48 KB and 20,000 × 20,000 pixels is refused from its header, before any
    /// of its pixels are decompressed.
    @Test func imagesOfTooManyPixelsAreRefusedBeforeDecoding() async throws {
        let small = HostilePNG.make(width: 200, height: 200, colorType: .palette, bitDepth: 1)
        let refusal = try #require(throws: PDFError.self) { try Self.write(small, limits: Self.small) }
        #expect(refusal.limit == .imagePixels)
        #expect(refusal.message.contains("200 × 200 pixels") && refusal.message.contains("'image'"))

        let bomb = HostilePNG.make(width: 20_000, height: 20_000, colorType: .palette, bitDepth: 1)
        #expect(bomb.count < 100_000)
        let document = try PDFDocument(data: HostilePDF.objectStreams([]))
        var image = Annotation(type: .image, pageIndex: 0, bbox: Rect(left: 10, top: 10, width: 100, height: 100))
        image.imageAttachmentId = "bomb"
        let opened = document.decodedByteCount
        #expect(throws: PDFError.self) {
            try document.writing(InstantDocumentJSON(annotations: [image]), attachments: ["bomb": bomb])
        }
        #expect(document.exceededLimit?.limit == .imagePixels)
        #expect(document.decodedByteCount == opened)
        // Within the limits, the same kind of image is written.
        _ = try Self.write(
            HostilePNG.make(width: 100, height: 100, colorType: .palette, bitDepth: 1), limits: Self.small)
    }

    /// An image's decompressed samples take from the document's budget too.
    @Test func imageSamplesShareTheDocumentsBudget() async throws {
        let limits = PDFLimits(maxDecodedBytes: Self.small.maxDecodedBytes)
        let png = HostilePNG.make(width: 1_500, height: 1_000, colorType: .rgba)
        let refusal = try #require(throws: PDFError.self) { try Self.write(png, limits: limits) }
        #expect(refusal.limit == .decodedBytes)
        let fits = try Self.write(HostilePNG.make(width: 500, height: 500, colorType: .rgba), limits: limits)
        #expect(fits.decodedByteCount >= 500 * 500 * 4)
    }
}
