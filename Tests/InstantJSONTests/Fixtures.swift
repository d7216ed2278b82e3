/// Realistic records of every type, written by hand after the format's documentation.
enum Fixtures {
    /// The ink annotation of the format's documentation.
    static let documentationInk = """
        {"v": 1, "type": "pspdfkit/ink", "bbox": [89, 98, 143, 207], "blendMode": "normal",
         "createdAt": "2018-07-03T13:53:03Z", "isDrawnNaturally": false, "lineWidth": 5,
         "lines": {"intensities": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]],
                   "points": [[[92, 101], [92, 202], [138, 303]], [[184, 101], [184, 202], [230, 303]]]},
         "opacity": 1, "pageIndex": 0, "strokeColor": "#AA47BE", "updatedAt": "2018-07-03T13:53:03Z"}
        """

    /// The document of the format's documentation: an ink annotation, a bookmark, a skipped original.
    static let documentationDocument = """
        {"annotations": [{"v": 1, "type": "pspdfkit/ink", "id": "01CHG7QMTDT1JFYQ8BSKGT6F3P",
           "bbox": [97.5, 97.5, 155, 205], "blendMode": "normal", "createdAt": "2018-07-03T14:11:21Z",
           "creatorName": "John Appleseed", "isDrawnNaturally": false, "lineWidth": 5,
           "lines": {"intensities": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]],
             "points": [[[100, 100], [100, 200], [150, 300]], [[200, 100], [200, 200], [250, 300]]]},
           "name": "A167811E-6D10-4546-A147-B7AD775FE8AC", "note": "", "opacity": 1, "pageIndex": 0,
           "strokeColor": "#AA47BE", "updatedAt": "2018-07-03T14:11:21Z"}],
         "bookmarks": [{"action": {"pageIndex": 1, "type": "goTo"}, "type": "pspdfkit/bookmark", "v": 1}],
         "format": "https://pspdfkit.com/instant-json/v1",
         "pdfId": {"changing": "wljL9fB/TPOAuGjHAsAsHg==", "permanent": "qTwUmg5VSm6ysfzcPlFvnQ=="},
         "skippedPdfObjectIds": [557]}
        """

    /// One realistic annotation of every type.
    static let annotations: [String: String] = [
        "ink": """
        {"v": 2, "type": "pspdfkit/ink", "id": "01HZX3K6Q4M8N2P5R7S9T1V3W5", "pageIndex": 2,
         "bbox": [10.5, 20.25, 100, 50], "lineWidth": 3, "strokeColor": "#FF0000", "isSignature": true,
         "lines": {"points": [[[11, 21], [50.5, 60.125]]], "intensities": [[0.2, 0.9]]},
         "backgroundColor": "#FFFFFF", "customData": {"reviewer": {"level": 3, "tags": ["a", null, true]}},
         "flags": ["noZoom", "locked"], "group": "reviewers", "futureField": {"x": [1, 2.5]}}
        """,
        "link": """
        {"v": 2, "type": "pspdfkit/link", "pageIndex": 0, "bbox": [72, 72, 200, 14], "borderColor": "#0000FF",
         "borderStyle": "solid", "borderWidth": 1,
         "action": {"type": "uri", "uri": "https://example.com/a?b=c", "subAction": {"type": "goTo", "pageIndex": 3}}}
        """,
        "highlight": """
        {"v": 2, "type": "pspdfkit/markup/highlight", "pageIndex": 1, "bbox": [50, 100, 300, 24],
         "rects": [[50, 100, 300, 12], [50, 112, 120, 12]], "color": "#FFFF00", "blendMode": "multiply",
         "note": "check this", "isCommentThreadRoot": true}
        """,
        "squiggly": """
        {"v": 2, "type": "pspdfkit/markup/squiggly", "pageIndex": 0, "bbox": [0, 0, 10, 10],
         "rects": [[0, 0, 10, 10]], "color": "#00FF00"}
        """,
        "strikeout": """
        {"v": 2, "type": "pspdfkit/markup/strikeout", "pageIndex": 0, "bbox": [0, 0, 10, 10],
         "rects": [[0, 0, 10, 10]], "color": "#FF0000", "opacity": 0.75}
        """,
        "underline": """
        {"v": 1, "type": "pspdfkit/markup/underline", "pageIndex": 0, "bbox": [0, 0, 10, 10],
         "rects": [[0, 0, 10, 10]], "color": "#0000FF"}
        """,
        "redaction": """
        {"v": 2, "type": "pspdfkit/markup/redaction", "pageIndex": 0, "bbox": [5, 5, 80, 20],
         "rects": [[5, 5, 80, 20]], "outlineColor": "#FF0000", "fillColor": "#000000",
         "overlayText": "REDACTED", "repeatOverlayText": false, "color": "#FF0000", "rotation": 0}
        """,
        "note": """
        {"v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [500, 20, 32, 32],
         "text": {"format": "plain", "value": "Please check the totals."}, "icon": "comment", "color": "#FFD700",
         "createdAt": "2024-02-29T23:59:59.123+01:00", "creatorName": "Ann"}
        """,
        "text": """
        {"v": 2, "type": "pspdfkit/text", "pageIndex": 0, "bbox": [100, 100, 200, 60],
         "text": {"format": "xhtml", "value": "<p>Hello <b>world</b></p>"}, "fontSize": 14, "font": "Helvetica",
         "fontColor": "#000000", "fontStyle": ["bold"], "horizontalAlign": "center", "verticalAlign": "top",
         "rotation": 90, "isFitting": false, "backgroundColor": "#EEEEEE",
         "callout": {"start": [90, 90], "knee": [95, 95], "end": [100, 100], "cap": "openArrow",
                     "innerRectInset": [10, 0, 0, 0]},
         "borderStyle": "solid", "borderWidth": 1}
        """,
        "ellipse": """
        {"v": 2, "type": "pspdfkit/shape/ellipse", "pageIndex": 0, "bbox": [10, 10, 50, 30], "strokeWidth": 2,
         "strokeColor": "#123456", "fillColor": "#ABCDEF", "strokeDashArray": [3, 3],
         "cloudyBorderIntensity": 2, "cloudyBorderInset": [1, 1, 1, 1]}
        """,
        "rectangle": """
        {"v": 2, "type": "pspdfkit/shape/rectangle", "pageIndex": 0, "bbox": [10, 10, 50, 30], "strokeWidth": 1.5,
         "strokeColor": "#000000", "measurementScale": {"unitFrom": "pt", "unitTo": "cm", "from": 1, "to": 0.0352778},
         "measurementPrecision": "twoDp"}
        """,
        "line": """
        {"v": 2, "type": "pspdfkit/shape/line", "pageIndex": 0, "bbox": [10, 10, 100, 100], "strokeWidth": 2,
         "strokeColor": "#000000", "startPoint": [10, 10], "endPoint": [110, 110],
         "lineCaps": {"start": "circle", "end": "closedArrow"}}
        """,
        "polygon": """
        {"v": 2, "type": "pspdfkit/shape/polygon", "pageIndex": 0, "bbox": [0, 0, 100, 100], "strokeWidth": 1,
         "strokeColor": "#000000", "points": [[0, 0], [100, 0], [50, 100]], "cloudyBorderIntensity": 1}
        """,
        "polyline": """
        {"v": 2, "type": "pspdfkit/shape/polyline", "pageIndex": 0, "bbox": [0, 0, 100, 100], "strokeWidth": 1,
         "strokeColor": "#000000", "points": [[0, 0], [100, 0], [50, 100]], "lineCaps": {"end": "openArrow"}}
        """,
        "image": """
        {"v": 2, "type": "pspdfkit/image", "pageIndex": 0, "bbox": [0, 0, 64, 64], "contentType": "image/png",
         "fileName": "logo.png", "description": "Company logo",
         "imageAttachmentId": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "rotation": 0}
        """,
        "stamp": """
        {"v": 2, "type": "pspdfkit/stamp", "pageIndex": 0, "bbox": [300, 300, 150, 50], "stampType": "Approved",
         "title": "Approved", "subtitle": "by Ann, 2024-03-01", "color": "#2E7D32", "rotation": 0}
        """,
        "customStamp": """
        {"v": 2, "type": "pspdfkit/stamp", "pageIndex": 0, "bbox": [300, 300, 150, 50], "stampType": "Custom",
         "title": "PAID", "color": "#1565C0"}
        """,
        "widget": """
        {"v": 2, "type": "pspdfkit/widget", "pageIndex": 0, "bbox": [100, 500, 200, 20], "formFieldName": "name",
         "borderColor": "#000000", "borderWidth": 1, "borderStyle": "solid", "font": "Helvetica", "fontSize": "auto",
         "fontColor": "#000000", "horizontalAlign": "left", "backgroundColor": "#FFFFFF", "pdfObjectId": 12,
         "id": "12"}
        """,
        "commentMarker": """
        {"v": 2, "type": "pspdfkit/comment-marker", "pageIndex": 0, "bbox": [20, 20, 24, 24], "icon": "comment",
         "isCommentThreadRoot": true}
        """,
        "media": """
        {"v": 2, "type": "pspdfkit/media", "pageIndex": 0, "bbox": [0, 0, 320, 240], "fileName": "clip.mp4"}
        """,
        "unknown": """
        {"v": 2, "type": "pspdfkit/unknown", "pageIndex": 0, "bbox": [0, 0, 10, 10], "pdfObjectId": 40, "id": "40"}
        """,
    ]

    static let bookmark = """
        {"v": 1, "type": "pspdfkit/bookmark", "name": "Chapter 2", "id": "01HZX3K6Q4M8N2P5R7S9T1V3W6",
         "action": {"type": "goTo", "pageIndex": 4}}
        """

    static let formFields: [String] = [
        """
        {"v": 1, "type": "pspdfkit/form-field/text", "name": "address.street", "label": "Street",
         "annotationIds": ["12"], "pdfObjectId": 11, "doNotSpellCheck": false, "doNotScroll": false,
         "multiLine": true, "comb": false, "defaultValue": "", "maxLength": 80, "flags": ["required"]}
        """,
        """
        {"v": 1, "type": "pspdfkit/form-field/checkbox", "name": "agree", "label": "I agree",
         "annotationIds": ["20"], "options": [{"label": "Yes", "value": "Yes"}], "defaultValues": []}
        """,
        """
        {"v": 1, "type": "pspdfkit/form-field/radio", "name": "size", "label": "Size",
         "annotationIds": ["21", "22"], "options": [{"label": "S", "value": "S"}, {"label": "L", "value": "L"}],
         "defaultValue": "S", "noToggleToOff": true, "radiosInUnison": false}
        """,
        """
        {"v": 1, "type": "pspdfkit/form-field/combobox", "name": "country", "label": "Country",
         "annotationIds": ["23"], "options": [{"label": "France", "value": "FR"}], "edit": true,
         "doNotSpellCheck": true, "multiSelect": false, "commitOnChange": true, "defaultValues": ["FR"]}
        """,
        """
        {"v": 1, "type": "pspdfkit/form-field/listbox", "name": "colors", "label": "Colors",
         "annotationIds": ["24"], "options": [{"label": "Red", "value": "r"}, {"label": "Blue", "value": "b"}],
         "multiSelect": true}
        """,
        """
        {"v": 1, "type": "pspdfkit/form-field/button", "name": "submit", "label": "", "annotationIds": ["25"],
         "buttonLabel": "Send"}
        """,
        """
        {"v": 1, "type": "pspdfkit/form-field/signature", "name": "sig", "label": "Signature",
         "annotationIds": ["26"]}
        """,
    ]

    static let formFieldValues: [String] = [
        #"{"v": 1, "type": "pspdfkit/form-field-value", "name": "address.street", "value": "1 Main St"}"#,
        #"{"v": 1, "type": "pspdfkit/form-field-value", "name": "colors", "value": ["r", "b"], "optionIndexes": [0, 1]}"#,
        #"{"v": 1, "type": "pspdfkit/form-field-value", "name": "agree", "value": null}"#,
    ]

    static let comments: [String] = [
        """
        {"v": 2, "type": "pspdfkit/comment", "rootId": "01HZX3K6Q4M8N2P5R7S9T1V3W5", "pageIndex": 0,
         "text": {"format": "xhtml", "value": "<p>Agreed</p>"}, "creatorName": "Bo",
         "createdAt": "2024-03-01T10:00:00Z", "customData": null}
        """,
        """
        {"v": 1, "type": "pspdfkit/comment", "rootId": "7", "pageIndex": 1, "text": "old style"}
        """,
    ]
}
