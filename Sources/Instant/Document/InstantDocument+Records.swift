import InstantJSON

// Comments, bookmarks and form field values, read and edited like annotations: every edit is
// committed to the local store before the call returns and syncs later.
extension InstantDocument {
    // MARK: Comments

    /// Every comment of the layer (of every thread), ordered by identifier.
    /// - Throws: ``InstantError/Code/notDownloaded`` until the download finished.
    public func comments() throws -> [Comment] {
        try records(of: Comment.self)
    }

    /// The comments of the thread whose root is the annotation with identifier `rootID`, oldest
    /// first (by `createdAt`, then identifier).
    public func comments(inThreadOf rootID: String) throws -> [Comment] {
        try comments().filter { $0.rootId == rootID }.sorted {
            ($0.createdAt ?? "", $0.id ?? "") < ($1.createdAt ?? "", $1.id ?? "")
        }
    }

    /// The comment with the given identifier, or `nil`.
    public func comment(withIdentifier identifier: String) throws -> Comment? {
        try record(of: Comment.self, withIdentifier: identifier)
    }

    /// Adds a comment to the thread of its `rootId`: an annotation of this document (usually a
    /// ``InstantJSON/AnnotationType/commentMarker`` or one with `isCommentThreadRoot`). The
    /// comment gets a new identifier (a ULID) unless it has one.
    ///
    /// ```swift
    /// var marker = Annotation(type: .commentMarker, pageIndex: 0, bbox: Rect(left: 40, top: 40, width: 20, height: 20))
    /// marker = try document.add(marker)
    /// try document.add(Comment(rootId: marker.id!, pageIndex: 0, text: AnnotationText(value: "Looks good")))
    /// ```
    /// - Returns: The comment as stored, with its identifier.
    /// - Throws: ``InstantError/Code/annotationNotFound`` if the document has no annotation with
    ///   the comment's `rootId`; ``InstantError/Code/invalidRecord`` for a comment that is not valid
    ///   Instant JSON.
    @discardableResult
    public func add(_ comment: Comment) throws -> Comment {
        guard try annotation(withIdentifier: comment.rootId) != nil else {
            throw InstantError(
                .annotationNotFound,
                "The comment's thread root '\(comment.rootId)' is not an annotation of this document; add the "
                    + "root annotation first and use its identifier as rootId.")
        }
        try checkPage(comment.pageIndex, of: Comment.noun)
        return try addRecord(comment)
    }

    /// Replaces a comment added before (matched by identifier) with this version.
    /// - Throws: ``InstantError/Code/recordNotFound`` if there is no comment with its identifier.
    public func update(_ comment: Comment) throws {
        try updateRecord(comment)
    }

    /// Removes a comment.
    /// - Throws: ``InstantError/Code/recordNotFound`` if there is no comment with its identifier.
    public func remove(_ comment: Comment) throws {
        try removeRecord(comment)
    }

    // MARK: Bookmarks

    /// Every bookmark of the layer, ordered by identifier.
    public func bookmarks() throws -> [Bookmark] {
        try records(of: Bookmark.self)
    }

    /// The bookmark with the given identifier, or `nil`.
    public func bookmark(withIdentifier identifier: String) throws -> Bookmark? {
        try record(of: Bookmark.self, withIdentifier: identifier)
    }

    /// Adds a bookmark; it gets a new identifier (a ULID) unless it has one.
    ///
    /// ```swift
    /// try document.add(Bookmark(name: "Summary", action: .goTo(pageIndex: 3)))
    /// ```
    /// - Returns: The bookmark as stored, with its identifier.
    /// - Throws: ``InstantError/Code/invalidRecord`` for a bookmark that is not valid Instant JSON.
    @discardableResult
    public func add(_ bookmark: Bookmark) throws -> Bookmark {
        try addRecord(bookmark)
    }

    /// Replaces a bookmark added before (matched by identifier) with this version.
    /// - Throws: ``InstantError/Code/recordNotFound`` if there is no bookmark with its identifier.
    public func update(_ bookmark: Bookmark) throws {
        try updateRecord(bookmark)
    }

    /// Removes a bookmark.
    /// - Throws: ``InstantError/Code/recordNotFound`` if there is no bookmark with its identifier.
    public func remove(_ bookmark: Bookmark) throws {
        try removeRecord(bookmark)
    }

    // MARK: Forms

    /// The form fields of the PDF (read-only: they come from the PDF), ordered by name.
    public func formFields() throws -> [FormField] {
        try records(of: FormField.self).sorted { $0.name < $1.name }
    }

    /// Every form field value of the layer, ordered by field name.
    public func formFieldValues() throws -> [FormFieldValue] {
        try records(of: FormFieldValue.self).sorted { $0.name < $1.name }
    }

    /// The value of the form field named `name`, or `nil` if it has none.
    public func formFieldValue(named name: String) throws -> FormFieldValue? {
        try record(of: FormFieldValue.self, withIdentifier: FormFieldValue.recordID(forName: name))
    }

    /// Sets the value of the form field `value.name` (a field has one value: this one replaces
    /// the one it had).
    ///
    /// ```swift
    /// try document.setFormFieldValue(FormFieldValue(name: "Reviewer", value: "Alice"))
    /// ```
    /// - Throws: ``InstantError/Code/invalidRecord`` for a value that is not valid Instant JSON.
    public func setFormFieldValue(_ value: FormFieldValue) throws {
        let isNew = try formFieldValue(named: value.name) == nil
        try commit([.put(value, isNew: isNew)])
    }

    /// Removes the value of the form field named `name` (the field shows its default).
    /// - Throws: ``InstantError/Code/recordNotFound`` if the field has no value.
    public func removeFormFieldValue(named name: String) throws {
        try removeRecord(FormFieldValue(name: name, value: .null))
    }
}
