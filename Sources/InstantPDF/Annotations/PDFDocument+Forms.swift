import InstantJSON

extension PDFDocument {
    /// The AcroForm fields as Instant JSON form fields and values (ISO 32000-1, 12.7).
    ///
    /// Terminal fields are found by walking `/Fields` with inherited `/FT`, `/Ff`, `/V`, `/DA`;
    /// their widgets are the field itself (when merged) or its kids with `/Subtype /Widget`.
    func formRecords() -> (fields: [FormField], values: [FormFieldValue]) {
        guard let form = resolve(catalog["AcroForm"] ?? .null).dictionaryValue else { return ([], []) }
        var fields: [FormField] = []
        var values: [FormFieldValue] = []
        var visited = Set<Int>()

        func visit(_ object: PDFObject, depth: Int) {
            guard depth < 64 else { return }
            if let reference = object.referenceValue, !visited.insert(reference.number).inserted { return }
            guard let node = resolve(object).dictionaryValue else { return }
            let kids = resolve(node["Kids"] ?? .null).arrayValue ?? []
            let childFields = kids.filter { kid in
                guard let child = resolve(kid).dictionaryValue else { return false }
                return child["T"] != nil || child["FT"] != nil && child["Subtype"]?.nameValue != "Widget"
            }
            if !childFields.isEmpty {
                for kid in childFields { visit(kid, depth: depth + 1) }
                return
            }
            guard let name = fieldName(of: node) else { return }
            var widgets: [String] = kids.compactMap { $0.referenceValue.map { String($0.number) } }
            if widgets.isEmpty, node["Subtype"]?.nameValue == "Widget", let reference = object.referenceValue {
                widgets = [String(reference.number)]
            }
            let type = inherited(node, "FT").flatMap { resolve($0).nameValue }
            let flags = inherited(node, "Ff").flatMap { resolve($0).intValue } ?? 0
            let kind: FormField.Kind
            switch type {
            case "Tx": kind = .text
            case "Btn": kind = flags & (1 << 16) != 0 ? .button : (flags & (1 << 15) != 0 ? .radio : .checkBox)
            case "Ch": kind = flags & (1 << 17) != 0 ? .comboBox : .listBox
            case "Sig": kind = .signature
            default: return
            }
            var field = FormField(
                kind: kind, name: name, label: resolve(node["TU"] ?? .null).textValue ?? "", annotationIds: widgets,
                id: object.referenceValue.map { String($0.number) })
            field.pdfObjectId = object.referenceValue?.number
            var fieldFlags: [String] = []
            if flags & 1 != 0 { fieldFlags.append("readOnly") }
            if flags & 2 != 0 { fieldFlags.append("required") }
            if flags & 4 != 0 { fieldFlags.append("noExport") }
            if !fieldFlags.isEmpty { field.flags = fieldFlags }
            let value = inherited(node, "V").map(resolve)
            switch kind {
            case .text:
                field["doNotSpellCheck"] = .bool(flags & (1 << 22) != 0)
                field["doNotScroll"] = .bool(flags & (1 << 23) != 0)
                field["multiLine"] = .bool(flags & (1 << 12) != 0)
                field["comb"] = .bool(flags & (1 << 24) != 0)
                field["password"] = .bool(flags & (1 << 13) != 0)
                field.defaultValue = inherited(node, "DV").flatMap { resolve($0).textValue } ?? ""
                if let maxLength = inherited(node, "MaxLen").flatMap({ resolve($0).intValue }), maxLength >= 0 {
                    field["maxLength"] = .integer(Int64(maxLength))
                }
                values.append(FormFieldValue(name: name, value: value?.textValue.map(JSONValue.string) ?? .null))
            case .checkBox, .radio:
                let states = onStates(of: node, kids: kids)
                field.options = states.map { FormField.Option(label: $0, value: $0) }
                let selected = value?.nameValue.flatMap { $0 == "Off" ? nil : $0 }
                if kind == .checkBox {
                    field.defaultValues = inherited(node, "DV").flatMap { resolve($0).nameValue }.map { [$0] } ?? []
                    values.append(FormFieldValue(name: name, value: selected.map { .array([.string($0)]) } ?? .null))
                } else {
                    field["noToggleToOff"] = .bool(flags & (1 << 14) != 0)
                    field["radiosInUnison"] = .bool(flags & (1 << 25) != 0)
                    values.append(FormFieldValue(name: name, value: selected.map(JSONValue.string) ?? .null))
                }
            case .comboBox, .listBox:
                let options = (resolve(inherited(node, "Opt") ?? .null).arrayValue ?? []).compactMap {
                    option -> FormField.Option? in
                    let item = resolve(option)
                    if let pair = item.arrayValue, pair.count == 2, let value = resolve(pair[0]).textValue,
                        let label = resolve(pair[1]).textValue
                    {
                        return FormField.Option(label: label, value: value)
                    }
                    return item.textValue.map { FormField.Option(label: $0, value: $0) }
                }
                field.options = options
                field["multiSelect"] = .bool(flags & (1 << 21) != 0)
                if kind == .comboBox {
                    field["edit"] = .bool(flags & (1 << 18) != 0)
                    field["doNotSpellCheck"] = .bool(flags & (1 << 22) != 0)
                }
                let selected: [String]
                if let list = value?.arrayValue {
                    selected = list.compactMap { resolve($0).textValue }
                } else {
                    selected = value?.textValue.map { [$0] } ?? []
                }
                let indexes =
                    (resolve(node["I"] ?? .null).arrayValue?.compactMap { resolve($0).intValue })
                    ?? selected.compactMap { choice in options.firstIndex { $0.value == choice } }
                values.append(
                    FormFieldValue(name: name, value: .array(selected.map(JSONValue.string)), optionIndexes: indexes))
            case .button:
                field["buttonLabel"] = .string(
                    resolve(resolve(node["MK"] ?? .null).dictionaryValue?["CA"] ?? .null).textValue ?? "")
            default:
                break
            }
            fields.append(field)
        }

        for field in resolve(form["Fields"] ?? .null).arrayValue ?? [] { visit(field, depth: 0) }
        return (fields, values)
    }

    /// The names of the "on" appearance states of a check box or radio button's widgets.
    private func onStates(of node: PDFDictionary, kids: [PDFObject]) -> [String] {
        let widgets = kids.isEmpty ? [node] : kids.compactMap { resolve($0).dictionaryValue }
        var states: [String] = []
        for widget in widgets {
            let normal = resolve(resolve(widget["AP"] ?? .null).dictionaryValue?["N"] ?? .null).dictionaryValue
            for state in normal?.entries.keys.sorted() ?? [] where state != "Off" && !states.contains(state) {
                states.append(state)
            }
        }
        return states
    }
}
