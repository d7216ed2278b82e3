// The records an app reads and writes (`Annotation`, `AnnotationType`, Instant JSON) come from
// InstantJSON: `import Instant` is all an app needs.
@_exported import InstantJSON
