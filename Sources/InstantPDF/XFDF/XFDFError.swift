/// Why an XFDF file could not be read: what is wrong, and the line it is on.
public struct XFDFError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the element and attribute where there is one.
    public var message: String
    /// The line of the file, from 1.
    public var line: Int

    public init(_ message: String, line: Int) {
        self.message = message
        self.line = line
    }

    public var description: String { "XFDF line \(line): \(message)" }
}

/// How much an XFDF file may hold, so that a hostile file cannot take unbounded memory or time.
/// The size of the file itself is the caller's to limit (the server takes it from its body limit).
public struct XFDFLimits: Hashable, Sendable {
    /// The deepest nesting of elements. The default, 64, is far above XFDF's own (a field name
    /// nests one `<field>` per part; rich text nests a few levels of XHTML).
    public var maximumDepth: Int
    /// The most elements in the file. The default, 2,000,000, allows a million annotations with a
    /// child each.
    public var maximumElementCount: Int
    /// The most attributes of one element. The default, 128, is four times what any annotation
    /// element of XFDF 3.0 defines.
    public var maximumAttributeCount: Int

    /// The default limits.
    public static let `default` = XFDFLimits()

    public init(maximumDepth: Int = 64, maximumElementCount: Int = 2_000_000, maximumAttributeCount: Int = 128) {
        precondition(maximumDepth > 0 && maximumElementCount > 0 && maximumAttributeCount > 0)
        self.maximumDepth = maximumDepth
        self.maximumElementCount = maximumElementCount
        self.maximumAttributeCount = maximumAttributeCount
    }
}
