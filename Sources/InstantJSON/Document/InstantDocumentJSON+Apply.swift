extension InstantDocumentJSON {
    /// Applies another document on top, as the server's `apply_instant_json` applies one to a
    /// layer: annotations and comments with the same `id` (or `pdfObjectId`) are replaced, new ones
    /// added, those whose `pdfObjectId` is in `skippedPdfObjectIds` deleted; form field values
    /// are replaced by name and attachments merged.
    public mutating func apply(_ other: InstantDocumentJSON) {
        let skipped = Set(other.skippedPdfObjectIds)
        annotations.removeAll { $0.pdfObjectId.map(skipped.contains) ?? false }
        comments.removeAll { $0.pdfObjectId.map(skipped.contains) ?? false }
        for annotation in other.annotations {
            if let index = annotations.firstIndex(where: {
                ($0.id != nil && $0.id == annotation.id)
                    || ($0.pdfObjectId != nil && $0.pdfObjectId == annotation.pdfObjectId)
            }) {
                annotations[index] = annotation
            } else {
                annotations.append(annotation)
            }
        }
        for comment in other.comments {
            if let index = comments.firstIndex(where: { $0.id != nil && $0.id == comment.id }) {
                comments[index] = comment
            } else {
                comments.append(comment)
            }
        }
        for value in other.formFieldValues {
            formFieldValues.removeAll { $0.name == value.name }
            formFieldValues.append(value)
        }
        attachments.merge(other.attachments) { _, new in new }
    }
}
