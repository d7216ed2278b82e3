import Foundation

/// The names XFDF 3.0 (ISO 19444-1) gives to what a PDF annotation dictionary holds, in one place
/// for the writer and the reader.
enum XFDFVocabulary {
    /// The XFDF namespace.
    static let namespace = "http://ns.adobe.com/xfdf/"

    /// Annotation element names by PDF subtype, for the subtypes Instant JSON has a type for.
    static let elementNames: [String: String] = [
        "Text": "text", "FreeText": "freetext", "Line": "line", "Square": "square", "Circle": "circle",
        "Polygon": "polygon", "PolyLine": "polyline", "Highlight": "highlight", "Underline": "underline",
        "Squiggly": "squiggly", "StrikeOut": "strikeout", "Ink": "ink", "Stamp": "stamp", "Link": "link",
        "Redact": "redact",
    ]

    /// The PDF subtype of an annotation element (names compared without case).
    static func subtype(ofElement name: String) -> String? {
        let lowercased = name.lowercased()
        return elementNames.first { $0.value == lowercased }?.key
    }

    /// Annotation elements of XFDF that have no Instant JSON type: they are skipped on import.
    static let unsupportedElements: Set<String> = ["caret", "fileattachment", "sound", "popup", "movie", "widget"]

    /// The `flags` words by `/F` bit (ISO 32000-1, 12.5.3).
    static let flagNames: [(bit: Int, name: String)] = [
        (0, "invisible"), (1, "hidden"), (2, "print"), (3, "nozoom"), (4, "norotate"), (5, "noview"),
        (6, "readonly"), (7, "locked"), (8, "togglenoview"), (9, "lockedcontents"),
    ]

    /// `/Q` as `justification`.
    static let justifications = ["left", "centered", "right"]

    /// `/BS /S` as `style`.
    static let borderStyles: [String: String] = [
        "S": "solid", "D": "dash", "B": "bevelled", "I": "inset", "U": "underline",
    ]

    /// The `flags` attribute for `/F` bits.
    static func flags(_ bits: Int) -> String {
        flagNames.filter { bits & (1 << $0.bit) != 0 }.map(\.name).joined(separator: ",")
    }

    /// `/F` bits for a `flags` attribute (words separated by commas or spaces, any case).
    static func flagBits(_ attribute: String) -> Int {
        var bits = 0
        for word in attribute.split(whereSeparator: { $0 == "," || $0 == " " }) {
            let name = word.lowercased()
            if let flag = flagNames.first(where: { $0.name == name }) { bits |= 1 << flag.bit }
        }
        return bits
    }

    /// Numbers separated by commas, as in `rect`, `coords`, `callout` and `dashes`.
    static func numbers(_ values: [Double]) -> String { values.map(PDFSerializer.number).joined(separator: ",") }

    /// Points as in `<vertices>` and `<gesture>`: `x,y` pairs separated by semicolons.
    static func points(_ values: [Double]) -> String {
        stride(from: 0, to: values.count - 1, by: 2).map {
            "\(PDFSerializer.number(values[$0])),\(PDFSerializer.number(values[$0 + 1]))"
        }
        .joined(separator: ";")
    }

    /// The numbers of an attribute or element text, separated by commas, semicolons or spaces;
    /// `nil` when one of them is not a finite number.
    static func parseNumbers(_ text: String) -> [Double]? {
        var values: [Double] = []
        for part in text.split(whereSeparator: { $0 == "," || $0 == ";" || $0 == " " || $0.isNewline || $0 == "\t" }) {
            guard let value = Double(part), value.isFinite else { return nil }
            values.append(value)
        }
        return values
    }
}
