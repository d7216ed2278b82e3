import Foundation
import InstantJSON

/// The normal appearance (`/AP /N`) of an annotation: a form XObject that viewers draw in the
/// annotation's rectangle when they do not draw the annotation themselves.
///
/// The form's space is the page's default user space (origin bottom left, y up, points): `/BBox` is
/// the annotation's `/Rect` and `/Matrix` is the identity, so the content draws at page coordinates.
struct AnnotationAppearance: Hashable, Sendable {
    /// The form's bounding box, equal to the annotation's `/Rect`.
    var boundingBox: PDFRect
    /// The content stream, not yet compressed (the writer compresses it).
    var content: [UInt8]
    /// The form's `/Resources`: `/Font`, `/ExtGState`, `/XObject`. Streams in it (images and their
    /// soft masks) may be direct `.stream` values: the writer makes them indirect objects.
    var resources: PDFDictionary
}
