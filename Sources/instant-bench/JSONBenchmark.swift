import ArgumentParser
import Foundation
import InstantJSON

/// Decodes, validates and re-encodes a ~10 MB Instant JSON document of 10,000 mixed annotations
/// (ink-heavy), beside `JSONSerialization` on the same bytes as the floor.
struct JSONBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "json", abstract: "Instant JSON decoding, validation and encoding throughput.")

    @Option(help: "Number of annotations in the document.")
    var annotations = 10_000

    @Option(help: "Timed repetitions of each step (the best one is reported).")
    var repetitions = 5

    func run() throws {
        let data = Self.document(annotations: annotations)
        let megabytes = Double(data.count) / 1_000_000
        print(String(format: "document: %d annotations, %.2f MB", annotations, megabytes))

        func measure(_ name: String, _ body: () throws -> Void) rethrows {
            var best = Double.infinity
            for _ in 0..<repetitions {
                let start = DispatchTime.now().uptimeNanoseconds
                try body()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            print(
                "\(name.padding(toLength: 48, withPad: " ", startingAt: 0)) "
                    + String(format: "%8.1f ms %8.1f MB/s", best * 1000, megabytes / best))
        }

        try measure("JSONSerialization.jsonObject (floor)") { _ = try JSONSerialization.jsonObject(with: data) }
        try measure("JSONValue(parsing:)") { _ = try JSONValue(parsing: data) }
        try measure("parse + validate + typed records (strict)") {
            _ = try InstantDocumentJSON.decode(data, mode: .strict)
        }
        // The server's work on each change of `instant-bench sync`'s pushes, outside its database:
        // reading a push of one note, checking the note, writing it with the server's fields.
        let push = Array(notePush(client: "benchmark", pushID: 1, base: 0, ids: ["01JBENCHMARKNOTE0000000000"]).utf8)
        let note = try JSONValue(parsing: benchmarkNoteContent)
        try measureEach("parse a push of one note (sync benchmark)") { _ = try JSONValue(parsing: push) }
        try measureEach("validate a pushed note (sync benchmark)") {
            guard Annotation.validationErrors(of: note, at: "").isEmpty else {
                throw BenchmarkError("The sync benchmark's note does not validate.")
            }
        }
        var members = note.objectValue ?? [:]
        members["updatedAt"] = "2026-11-26T16:00:00.000Z"
        members["createdAt"] = "2026-11-26T16:00:00.000Z"
        let stamped = JSONValue.object(members)
        measureEach("serialize a stamped note (sync benchmark)") { _ = stamped.serialized() }
        let document = try InstantDocumentJSON.decode(data, mode: .strict).document
        measure("encode (sorted keys)") { _ = document.serialized() }
        let foundationObject = try JSONSerialization.jsonObject(with: data)
        try measure("JSONSerialization.data (encode floor)") {
            _ = try JSONSerialization.data(withJSONObject: foundationObject, options: [.sortedKeys])
        }
    }

    /// Runs `body` 100,000 times per repetition and prints the best time per run.
    private func measureEach(_ name: String, _ body: () throws -> Void) rethrows {
        let runs = 100_000
        var best = Double.infinity
        for _ in 0..<repetitions {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<runs { try body() }
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / Double(runs))
        }
        print("\(name.padding(toLength: 48, withPad: " ", startingAt: 0)) " + String(format: "%8.0f ns each", best))
    }

    /// A deterministic document: 60% ink with long strokes, the rest markup, notes, shapes, text.
    static func document(annotations count: Int) -> Data {
        var state: UInt64 = 0x1234_5678
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        func coordinate() -> JSONValue { .double((next() * 6000).rounded() / 10) }
        var records: [JSONValue] = []
        for index in 0..<count {
            var record: JSONObject = [
                "v": 2, "id": .string(ULIDGenerator.shared.next().string), "pageIndex": .integer(Int64(index % 200)),
                "bbox": [coordinate(), coordinate(), coordinate(), coordinate()], "opacity": 1,
                "createdAt": "2024-03-01T10:00:00Z", "updatedAt": "2024-03-01T10:00:00.250Z", "creatorName": "Ann",
            ]
            switch index % 10 {
            case 0...5:
                let strokes = (0..<3).map { _ in JSONValue.array((0..<20).map { _ in [coordinate(), coordinate()] }) }
                record["type"] = "pspdfkit/ink"
                record["lines"] = [
                    "points": .array(strokes),
                    "intensities": .array(strokes.map { _ in .array(Array(repeating: 0.5, count: 20)) }),
                ]
                record["lineWidth"] = 3
                record["strokeColor"] = "#AA47BE"
            case 6:
                record["type"] = "pspdfkit/markup/highlight"
                record["rects"] = [[coordinate(), coordinate(), 100, 12], [coordinate(), coordinate(), 80, 12]]
                record["color"] = "#FFFF00"
            case 7:
                record["type"] = "pspdfkit/note"
                record["text"] = ["format": "plain", "value": "Please check the figures on this page."]
                record["icon"] = "comment"
            case 8:
                record["type"] = "pspdfkit/shape/polygon"
                record["points"] = .array((0..<8).map { _ in [coordinate(), coordinate()] })
                record["strokeWidth"] = 2
                record["strokeColor"] = "#000000"
            default:
                record["type"] = "pspdfkit/text"
                record["text"] = ["format": "xhtml", "value": "<p>Reviewed</p>"]
                record["fontSize"] = 14
            }
            records.append(.object(record))
        }
        let document: JSONValue = ["format": .string(InstantDocumentJSON.format), "annotations": .array(records)]
        return document.serialized()
    }
}
