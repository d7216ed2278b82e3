import Foundation
import Logging
import Synchronization
import Testing

@testable import InstantServer

@Suite("Log lines")
struct LineLogHandlerTests {
    /// The lines a handler wrote.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }

        func logger(label: String = "instant", provider: Logger.MetadataProvider? = nil) -> Logger {
            Logger(label: label) { label in
                LineLogHandler(label: label, metadataProvider: provider) { line in
                    self.lines.withLock { $0.append(line) }
                }
            }
        }
    }

    struct Refusal: Error, CustomStringConvertible {
        var description: String { "the layer is full" }
    }

    @Test func aLineHasTheTimeLevelLabelMetadataByKeySourceAndMessage() throws {
        let lines = Lines()
        var logger = lines.logger()
        logger[metadataKey: "request.id"] = "r-1"
        logger[metadataKey: "document.id"] = "doc"
        logger.warning("Answered a repeated push", metadata: ["client.id": "phone"])
        let line = try #require(lines.all.first)
        let pattern = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} warning instant: /#
        #expect(line.prefixMatch(of: pattern) != nil, "\(line)")
        #expect(
            line.hasSuffix(
                " warning instant: client.id=phone document.id=doc request.id=r-1 [InstantServerTests] Answered a repeated push\n"
            ), "\(line)")
    }

    @Test func metadataOfTheCallWinsOverTheProvidersWhichWinsOverTheLoggers() throws {
        let lines = Lines()
        var logger = lines.logger(provider: Logger.MetadataProvider { ["trace": "provided", "span": "s"] })
        logger[metadataKey: "trace"] = "set"
        logger[metadataKey: "user"] = "ann"
        logger.info("one")
        logger.info("two", metadata: ["trace": "given"])
        #expect(lines.all.count == 2)
        #expect(
            lines.all[0].hasSuffix(": span=s trace=provided user=ann [InstantServerTests] one\n"), "\(lines.all[0])")
        #expect(lines.all[1].hasSuffix(": span=s trace=given user=ann [InstantServerTests] two\n"), "\(lines.all[1])")
    }

    @Test func anErrorGoesInTheMetadataAndALineWithoutMetadataHasNone() throws {
        let lines = Lines()
        let logger = lines.logger(label: "")
        logger.error("Commit failed", error: Refusal())
        logger.info("Started")
        #expect(lines.all.count == 2)
        #expect(
            lines.all[0].hasSuffix(
                " error: error.message=the layer is full error.type=InstantServerTests.LineLogHandlerTests.Refusal"
                    + " [InstantServerTests] Commit failed\n"), "\(lines.all[0])")
        #expect(lines.all[1].hasSuffix(" info: [InstantServerTests] Started\n"), "\(lines.all[1])")
    }

    @Test func aLoggersLevelAndMetadataAreItsOwn() throws {
        let lines = Lines()
        var request = lines.logger()
        request.logLevel = .warning
        var copy = request
        copy[metadataKey: "request.id"] = "r-2"
        copy.logLevel = .debug
        request.info("not written: below the level")
        copy.debug("written")
        request.warning("without the copy's metadata")
        #expect(lines.all.count == 2)
        #expect(lines.all[0].hasSuffix(": request.id=r-2 [InstantServerTests] written\n"), "\(lines.all[0])")
        #expect(
            lines.all[1].hasSuffix("instant: [InstantServerTests] without the copy's metadata\n"), "\(lines.all[1])")
    }
}
