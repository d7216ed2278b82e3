import Foundation
import Hummingbird
import InstantJSON

/// Form fields (`formField` records) and their widgets (`pspdfkit/widget` annotations), with the
/// existing server's batch answers: every item is checked and written on its own, and the answer
/// lists the ids written and the `failingPaths` of the others.
extension InstantAPI {
    /// What a batch route works on.
    struct FormBatch {
        /// The body's array, `formFields` or `formFieldWidgets`.
        var member: String
        /// The body's ids for deletion, `formFieldIds` or `formFieldWidgetIds`.
        var idsMember: String
        var kind: RecordKind
        /// Whether the records are widgets (annotations of type `pspdfkit/widget`).
        var isWidget: Bool

        static let fields = FormBatch(
            member: "formFields", idsMember: "formFieldIds", kind: .formField, isWidget: false)
        static let widgets = FormBatch(
            member: "formFieldWidgets", idsMember: "formFieldWidgetIds", kind: .annotation, isWidget: true)
    }

    // MARK: Reading

    /// `GET .../form-fields`: every form field with its widgets.
    func listFormFields(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let form = try await formRecords(documentID: id, layer: layer)
        return Self.data(.array(form.fields.map { form.fieldJSON($0) }))
    }

    /// `GET .../form-fields/{formFieldID}`: one form field with its widgets.
    func getFormField(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let fieldID = try identifier("formFieldID", context, what: "form field id")
        let form = try await formRecords(documentID: id, layer: layer)
        guard let field = form.fields.first(where: { $0.id == fieldID }) else {
            throw APIError.notFound("No form field has the id '\(fieldID)' on this layer.")
        }
        return Self.respond(form.fieldJSON(field))
    }

    /// `GET .../form-field-widgets`: every widget with its form field.
    func listFormFieldWidgets(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let form = try await formRecords(documentID: id, layer: layer)
        return Self.data(.array(form.widgets.map { form.widgetJSON($0) }))
    }

    /// `GET .../form-field-widgets/{formFieldWidgetID}`: one widget with its form field.
    func getFormFieldWidget(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let widgetID = try identifier("formFieldWidgetID", context, what: "widget id")
        let form = try await formRecords(documentID: id, layer: layer)
        guard let widget = form.widgets.first(where: { $0.id == widgetID }) else {
            throw APIError.notFound("No form field widget has the id '\(widgetID)' on this layer.")
        }
        return Self.respond(form.widgetJSON(widget))
    }

    /// A layer's form fields and widgets, and which belong together: a widget belongs to the
    /// field whose `annotationIds` lists it, or else to the field its `formFieldName` names.
    struct FormRecords {
        var fields: [StoredRecord]
        var widgets: [StoredRecord]
        private var contents: [String: JSONValue] = [:]

        init(fields: [StoredRecord], annotations: [StoredRecord]) {
            self.fields = fields
            var widgets: [StoredRecord] = []
            for record in fields + annotations {
                guard let content = try? JSONValue.parse(record.content) else { continue }
                if record.kind == .annotation {
                    guard content["type"]?.stringValue == "pspdfkit/widget" else { continue }
                    widgets.append(record)
                }
                contents[record.id] = content
            }
            self.widgets = widgets
        }

        func content(_ record: StoredRecord) -> JSONValue { contents[record.id] ?? .null }

        func widgets(of field: StoredRecord) -> [StoredRecord] {
            let listed = Set(content(field)["annotationIds"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            let name = content(field)["name"]?.stringValue
            return widgets.filter { widget in
                listed.contains(widget.id) || (name != nil && content(widget)["formFieldName"]?.stringValue == name)
            }
        }

        func field(of widget: StoredRecord) -> StoredRecord? {
            fields.first { field in
                content(field)["annotationIds"]?.arrayValue?.contains(.string(widget.id)) == true
            }
                ?? fields.first { content($0)["name"] == content(widget)["formFieldName"] }
        }

        func recordJSON(_ record: StoredRecord) -> JSONObject {
            [
                "id": .string(record.id), "content": content(record), "createdBy": .optional(record.createdBy),
                "updatedBy": .optional(record.updatedBy), "group": .optional(record.group),
            ]
        }

        func fieldJSON(_ field: StoredRecord) -> JSONValue {
            var json = recordJSON(field)
            json["widgetAnnotations"] = .array(widgets(of: field).map { .object(recordJSON($0)) })
            return .object(json)
        }

        func widgetJSON(_ widget: StoredRecord) -> JSONValue {
            var json = recordJSON(widget)
            if let field = field(of: widget) { json["formField"] = .object(recordJSON(field)) }
            return .object(json)
        }
    }

    private func formRecords(documentID: String, layer: String) async throws -> FormRecords {
        FormRecords(
            fields: try await storage.records(documentID: documentID, layer: layer, kind: .formField),
            annotations: try await storage.records(documentID: documentID, layer: layer, kind: .annotation))
    }

    // MARK: Writing

    /// `POST .../form-fields` and `.../form-field-widgets`: creates each item that is valid and
    /// whose id is free.
    func createFormRecords(_ batch: FormBatch) -> @Sendable (Request, InstantRequestContext) async throws -> Response {
        { request, context in try await self.writeFormRecords(batch, request, context, creating: true) }
    }

    /// `PUT .../form-fields` and `.../form-field-widgets`: replaces each item that is valid and
    /// exists.
    func updateFormRecords(_ batch: FormBatch) -> @Sendable (Request, InstantRequestContext) async throws -> Response {
        { request, context in try await self.writeFormRecords(batch, request, context, creating: false) }
    }

    /// `DELETE .../form-fields` and `.../form-field-widgets` with the ids, or `"all"`.
    func deleteFormRecords(_ batch: FormBatch) -> @Sendable (Request, InstantRequestContext) async throws -> Response {
        { request, context in
            let (id, layer, _) = try await self.documentAndLayer(context)
            let body = try await self.jsonBody(request)
            var failures: [(String, String)] = []
            var ids: [(index: Int, id: String)] = []
            if body[batch.idsMember]?.stringValue == "all" {
                let form = try await self.formRecords(documentID: id, layer: layer)
                ids = (batch.isWidget ? form.widgets : form.fields).enumerated().map { ($0.offset, $0.element.id) }
            } else if let list = body[batch.idsMember]?.arrayValue {
                for (index, value) in list.enumerated() {
                    if let text = value.stringValue {
                        ids.append((index, text))
                    } else {
                        failures.append(("$.\(batch.idsMember)[\(index)]", "expected an id (a string)"))
                    }
                }
            } else {
                throw APIError.badRequest("The body needs '\(batch.idsMember)': \"all\" or an array of ids.")
            }
            let kinds = try await self.kinds(of: ids.map(\.id), documentID: id, layer: layer)
            var changes: [RecordChange] = []
            var positions: [String: Int] = [:]
            for (index, recordID) in ids {
                guard kinds[recordID] == batch.kind else {
                    failures.append(
                        ("$.\(batch.idsMember)[\(index)]", "no \(Self.noun(batch)) has the id '\(recordID)'"))
                    continue
                }
                changes.append(.delete(id: recordID, condition: .exists))
                positions[recordID] = index
            }
            let result = try await self.storage.apply(
                changes, documentID: id, layer: layer, onConditionFailure: .skipChange)
            for skipped in result.skipped {
                failures.append(("$.\(batch.idsMember)[\(positions[skipped.recordID] ?? 0)]", "\(skipped.error)"))
            }
            return Self.batchResponse(applied: result.applied.map(\.id), failures: failures)
        }
    }

    private func writeFormRecords(
        _ batch: FormBatch, _ request: Request, _ context: InstantRequestContext, creating: Bool
    ) async throws -> Response {
        let (id, layer, document) = try await documentAndLayer(context)
        let body = try await jsonBody(request)
        guard let items = body[batch.member]?.arrayValue, !items.isEmpty else {
            throw APIError.badRequest(
                "The body needs '\(batch.member)': a non-empty array of {\(creating ? "id?" : "id"), content, user_id?"
                    + "\(batch.isWidget ? "" : ", group?")} objects.")
        }
        var failures: [(String, String)] = []
        var writes: [(index: Int, write: RecordWrite)] = []
        for (index, item) in items.enumerated() {
            let path = "$.\(batch.member)[\(index)]"
            do {
                writes.append(
                    (index, try formWrite(item, batch: batch, document: document, path: path, creating: creating)))
            } catch {
                failures.append((path, error.reason))
            }
        }
        // Updates replace records of the route's kind only.
        if !creating {
            let kinds = try await kinds(of: writes.map(\.write.id), documentID: id, layer: layer)
            writes.removeAll { entry in
                guard kinds[entry.write.id] != batch.kind else { return false }
                failures.append(
                    ("$.\(batch.member)[\(entry.index)]", "no \(Self.noun(batch)) has the id '\(entry.write.id)'"))
                return true
            }
        }
        let result = try await storage.apply(
            writes.map { .put($0.write, condition: creating ? .absent : .exists) }, documentID: id, layer: layer,
            onConditionFailure: .skipChange)
        let positions = Dictionary(writes.map { ($0.write.id, $0.index) }, uniquingKeysWith: { first, _ in first })
        for skipped in result.skipped {
            failures.append(("$.\(batch.member)[\(positions[skipped.recordID] ?? 0)]", "\(skipped.error)"))
        }
        return Self.batchResponse(applied: result.applied.map(\.id), failures: failures)
    }

    /// Validates `{id?, content, user_id?, group?}` into a write of a form field or a widget.
    private func formWrite(
        _ item: JSONValue, batch: FormBatch, document: StoredDocument, path: String, creating: Bool
    ) throws(APIError) -> RecordWrite {
        guard let object = item.objectValue else { throw .badRequest("\(path): expected an object") }
        guard let content = object["content"] else { throw .unprocessable("\(path).content: missing") }
        if batch.isWidget, content["type"]?.stringValue != "pspdfkit/widget" {
            throw .unprocessable("\(path).content.type: a widget is a 'pspdfkit/widget' annotation")
        }
        if let problem = RecordValidation.problem(
            kind: batch.kind, content: content, pageCount: document.pageCount, path: "\(path).content")
        {
            throw .unprocessable(problem)
        }
        let recordID = object["id"]?.stringValue ?? content["id"]?.stringValue
        if let value = recordID { try Identifiers.validate(value, what: "\(Self.noun(batch)) id") }
        if recordID == nil, !creating { throw .badRequest("\(path).id: missing") }
        return InstantJSONImport.write(
            kind: batch.kind, content: content, user: object["user_id"]?.stringValue,
            group: batch.isWidget ? nil : object["group"]?.stringValue, identifiers: identifiers, id: recordID)
    }

    /// The kinds of the live records with these ids.
    private func kinds(of ids: [String], documentID: String, layer: String) async throws -> [String: RecordKind] {
        var kinds: [String: RecordKind] = [:]
        for recordID in Set(ids) {
            if let record = try await storage.record(documentID: documentID, layer: layer, id: recordID),
                !record.isDeleted
            {
                kinds[recordID] = record.kind
            }
        }
        return kinds
    }

    private static func noun(_ batch: FormBatch) -> String { batch.isWidget ? "form field widget" : "form field" }

    /// The existing server's `BatchOperationResult`: `success` when every item was written,
    /// `partial_failure` when some were, `failure` when none; 200 in every case.
    static func batchResponse(applied: [String], failures: [(path: String, details: String)]) -> Response {
        let result = failures.isEmpty ? "success" : (applied.isEmpty ? "failure" : "partial_failure")
        var json: JSONObject = [
            "data": .array(applied.map { ["id": .string($0)] }), "result": .string(result), "status": 200,
        ]
        if !failures.isEmpty {
            json["failingPaths"] = .array(
                failures.map { ["path": .string($0.path), "details": .string($0.details)] })
            json["details"] = .string("\(applied.count) written, \(failures.count) failed (see failingPaths)")
        }
        return respond(.object(json))
    }
}
