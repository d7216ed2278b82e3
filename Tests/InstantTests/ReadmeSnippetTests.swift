import Foundation
import Testing

/// The README's SDK snippet is the example app's code, which the build compiles and a test runs
/// (`ServeProcessTests.theExampleAppAddsANoteAndSyncsIt`): a snippet that stops compiling fails here.
@Suite("README snippet", .timeLimit(.minutes(10)))
struct ReadmeSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyLineOfTheSDKSnippetIsInTheExampleApp() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: Self.root.appendingPathComponent("Examples/instant-notes/main.swift"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Using the SDK").dropFirst().first)
        let snippet =
            try #require(section.components(separatedBy: "```swift\n").dropFirst().first)
            .components(separatedBy: "```").first ?? ""
        let exampleLines = Set(example.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        let lines = snippet.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        #expect(lines.count >= 5)
        for line in lines {
            #expect(exampleLines.contains(line), "README line not in Examples/instant-notes/main.swift: \(line)")
        }
    }
}
