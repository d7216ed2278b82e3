import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web viewer and its JavaScript client in a real headless Chromium against `instant serve`
/// (issue 16, "Proof, in a real browser").
@Suite("Viewer in a browser", .serialized, .enabled(if: BrowserTools.shouldRun, BrowserTools.absence))
struct ViewerBrowserTests {
    /// Records, in the current window, when each annotation element first appears (`Date.now()`).
    static let recordAppearances = """
        window.__appeared = {};
        const note = (node) => {
          if (node.nodeType !== 1) return;
          for (const element of [node, ...node.querySelectorAll('[data-record-id]')]) {
            const id = element.dataset?.recordId;
            if (id && !(id in window.__appeared)) window.__appeared[id] = Date.now();
          }
        };
        note(document.body);
        new MutationObserver((mutations) => {
          for (const mutation of mutations) for (const node of mutation.addedNodes) note(node);
        }).observe(document.body, { childList: true, subtree: true });
        """

    @Test func anInkStrokeReachesTheOtherWindowWithinASecondAndAnSDKNoteReachesBoth() async throws {
        let fixture = try await ViewerFixture.start()
        do {
            let document = try await fixture.upload(TestPDF.make(pageCount: 2, seed: 16))
            let browser = fixture.browser
            let first = try await browser.currentWindow()
            try await fixture.openViewer(jwt: try await fixture.token(document: document, user: "alice"), zoom: 1)
            let second = try await browser.newWindow()
            try await browser.switchTo(window: second)
            try await fixture.openViewer(jwt: try await fixture.token(document: document, user: "bob"), zoom: 1)
            try await browser.execute(Self.recordAppearances)
            // Presence: each window sees both users once both listen.
            #expect(
                try await browser.waitUntil(
                    script:
                        "return ['alice', 'bob'].every((user) => document.querySelector('#presence [data-user-id=\"' + user + '\"]'))"
                ))

            try await browser.switchTo(window: first)
            try await browser.execute(
                "document.addEventListener('pointerup', () => { window.__pointerUp = Date.now(); }, true)")
            try await fixture.chooseTool("ink")
            try await fixture.drawStroke(through: [(100, 100), (140, 130), (180, 110), (220, 160)])
            let strokeID = try await fixture.newRecordID(type: "pspdfkit/ink")
            let pointerUp = try #require(try await browser.execute("return window.__pointerUp").doubleValue)

            try await browser.switchTo(window: second)
            var appeared: Double?
            _ = try await eventually(10) {
                appeared = try await browser.execute(
                    "return window.__appeared[arguments[0]] ?? null",
                    [
                        .string(strokeID)
                    ]
                ).doubleValue
                return appeared != nil
            }
            let latency = try #require(appeared, "the stroke never appeared in the other window") - pointerUp
            #expect(latency <= 1000, "the stroke appeared \(latency) ms after the mouse was released")

            let stored = try #require(try await fixture.serverAnnotations(document)[strokeID])
            #expect(stored["createdBy"] == "alice")
            let points = stored["content"]?["lines"]?["points"]?.arrayValue?.first?.arrayValue ?? []
            #expect(points.count >= 4)

            // A note from the Swift SDK shows in both windows.
            let sdkDirectory = fixture.directory.appendingPathComponent("sdk-client")
            let client = try InstantClient(serverURL: fixture.baseURL, dataDirectory: sdkDirectory)
            let jwt = try await fixture.token(document: document, user: "carol")
            let descriptor = try client.documentDescriptor(forJWT: jwt)
            try descriptor.download(usingJWT: jwt)
            #expect(try await eventually(30) { descriptor.documentState == .clean })
            let note = try Annotation(
                json: [
                    "v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [300, 300, 24, 24],
                    "text": ["format": "plain", "value": "From the SDK"], "icon": "comment",
                ])
            let added = try descriptor.editableDocument.add(note)
            let noteID = try #require(try descriptor.identifier(for: added))
            for window in [first, second] {
                try await browser.switchTo(window: window)
                #expect(
                    try await browser.waitUntil(
                        30, script: "return !!document.querySelector('[data-record-id=\"' + arguments[0] + '\"]')",
                        [.string(noteID)]), "the SDK's note is not in window \(window)")
            }
            #expect(try await fixture.securityPolicyViolations() == [])
        } catch {
            await fixture.finish()
            throw error
        }
        await fixture.finish()
    }
}
