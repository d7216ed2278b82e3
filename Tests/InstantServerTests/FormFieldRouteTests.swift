import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// `form-fields` and `form-field-widgets`: lists with what belongs together, batch writes with
/// the existing server's `BatchOperationResult`, against a live server.
@Suite("Form field and widget routes", .timeLimit(.minutes(10)))
struct FormFieldRouteTests {
    static func widget(_ id: String, field: String) -> JSONValue {
        [
            "v": 2, "type": "pspdfkit/widget", "id": .string(id), "pageIndex": 0, "bbox": [10, 10, 100, 20],
            "formFieldName": .string(field), "opacity": 1, "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00Z",
        ]
    }

    static func textField(_ name: String, widgets: [String]) -> JSONValue {
        [
            "v": 1, "type": "pspdfkit/form-field/text", "name": .string(name), "label": .string(name),
            "annotationIds": .array(widgets.map(JSONValue.string)), "doNotSpellCheck": false, "doNotScroll": false,
            "multiLine": false, "comb": false, "defaultValue": "",
        ]
    }

    @Test func fieldsAndWidgetsAreListedTogether() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.form())
            for base in ["/api/documents/\(id)", "/api/documents/\(id)/layers/review"] {
                let fields = try await client.request(.get, "\(base)/form-fields")
                #expect(fields.status == .ok, "\(fields.reason ?? "")")
                let list = try #require(fields.data?.arrayValue)
                #expect(Set(list.compactMap { $0["content"]?["name"]?.stringValue }) == ["Text Box", "Filled Box"])
                let textBox = try #require(list.first { $0["content"]?["name"] == "Text Box" })
                let widgets = try #require(textBox["widgetAnnotations"]?.arrayValue)
                #expect(widgets.count == 1)
                #expect(widgets.first?["content"]?["type"] == "pspdfkit/widget")
                let fieldID = try #require(textBox["id"]?.stringValue)
                let one = try await client.request(
                    .get, "\(base)/form-fields/\(fieldID.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
                )
                #expect(one.json?["content"]?["name"] == "Text Box")
                #expect(one.json?["widgetAnnotations"]?.arrayValue?.count == 1)

                let allWidgets = try #require(
                    try await client.request(.get, "\(base)/form-field-widgets").data?.arrayValue)
                #expect(allWidgets.count == 2)
                #expect(allWidgets.allSatisfy { $0["formField"]?["content"]?["name"] != nil })
                let widgetID = try #require(widgets.first?["id"]?.stringValue)
                let widget = try await client.request(.get, "\(base)/form-field-widgets/\(widgetID)")
                #expect(widget.json?["formField"]?["id"]?.stringValue == fieldID)
            }
            #expect(try await client.request(.get, "/api/documents/\(id)/form-fields/nope").status == .notFound)
            #expect(try await client.request(.get, "/api/documents/\(id)/form-field-widgets/nope").status == .notFound)
        }
    }

    @Test func batchesWriteWhatIsValidAndNameWhatFailed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.form())
            let base = "/api/documents/\(id)/layers/review"
            let widgets = try await client.json(
                .post, "\(base)/form-field-widgets",
                [
                    "formFieldWidgets": [
                        ["content": Self.widget("w-extra", field: "Extra")], ["content": ["type": "pspdfkit/ink"]],
                    ]
                ])
            #expect(widgets.status == .ok)
            #expect(widgets.json?["result"] == "partial_failure")
            #expect(widgets.json?["data"] == [["id": "w-extra"]])
            #expect(widgets.json?["failingPaths"]?.arrayValue?.first?["path"] == "$.formFieldWidgets[1]")

            let fields = try await client.json(
                .post, "\(base)/form-fields",
                [
                    "formFields": [
                        ["content": Self.textField("Extra", widgets: ["w-extra"]), "group": "team", "user_id": "ada"]
                    ]
                ])
            #expect(fields.json?["result"] == "success", "\(fields.json ?? .null)")
            let fieldID = try #require(fields.json?["data"]?.arrayValue?.first?["id"]?.stringValue)
            let created = try await client.request(
                .get, "\(base)/form-fields/\(fieldID.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            #expect(created.json?["createdBy"] == "ada")
            #expect(created.json?["group"] == "team")
            #expect(created.json?["widgetAnnotations"]?.arrayValue?.map { $0["id"] } == ["w-extra"])
            let again = try await client.json(
                .post, "\(base)/form-fields", ["formFields": [["content": Self.textField("Extra", widgets: [])]]])
            #expect(again.json?["result"] == "failure")

            var changed = Self.textField("Extra", widgets: ["w-extra"])
            if case .object(var object) = changed {
                object["label"] = "Changed"
                changed = .object(object)
            }
            let update = try await client.json(
                .put, "\(base)/form-fields",
                ["formFields": [["id": .string(fieldID), "content": changed], ["id": "w-extra", "content": changed]]])
            #expect(update.json?["result"] == "partial_failure", "\(update.json ?? .null)")
            #expect(update.json?["failingPaths"]?.arrayValue?.first?["path"] == "$.formFields[1]")

            let removed = try await client.json(
                .delete, "\(base)/form-field-widgets", ["formFieldWidgetIds": ["w-extra", "nope"]])
            #expect(removed.json?["data"] == [["id": "w-extra"]])
            #expect(removed.json?["failingPaths"]?.arrayValue?.first?["path"] == "$.formFieldWidgetIds[1]")
            let all = try await client.json(.delete, "\(base)/form-fields", ["formFieldIds": "all"])
            #expect(all.json?["data"]?.arrayValue?.count == 3)
            #expect(try await client.request(.get, "\(base)/form-fields").data?.arrayValue?.isEmpty == true)
            // The layer the fields were deleted on is the only one changed.
            #expect(try await client.request(.get, "/api/documents/\(id)/form-fields").data?.arrayValue?.count == 2)
            let bad = try await client.json(.post, "\(base)/form-fields", ["formFields": []])
            #expect(bad.status == .badRequest)
        }
    }
}
