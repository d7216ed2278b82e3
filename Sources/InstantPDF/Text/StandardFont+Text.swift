extension StandardFont {
    /// The family of a `/BaseFont` name without a subset tag (`ABCDEF+`): Courier, Times or
    /// Helvetica (and Arial); `nil` for other fonts.
    private static func family(_ baseFontName: String) -> StandardFont? {
        var name = Substring(baseFontName)
        if let plus = name.firstIndex(of: "+"), name.distance(from: name.startIndex, to: plus) == 6 {
            name = name[name.index(after: plus)...]
        }
        let lowered = name.lowercased()
        if lowered.hasPrefix("courier") { return .courier }
        if lowered.hasPrefix("times") { return .timesRoman }
        if lowered.hasPrefix("helvetica") || lowered.hasPrefix("arial") {
            return lowered.contains("bold") ? .helveticaBold : .helvetica
        }
        return nil
    }

    /// The standard font whose widths stand in for a font that has no `/Widths`: its family, or
    /// Helvetica.
    init(baseFontName: String) {
        self = Self.family(baseFontName) ?? .helvetica
    }

    /// The ascender and descender of the standard font of a name's family (from the fonts' AFM
    /// files), as fractions of the font size; `nil` when the name is not of a standard family.
    static func verticalMetrics(baseFontName: String) -> (ascent: Double, descent: Double)? {
        switch family(baseFontName) {
        case .courier: (0.629, -0.157)
        case .timesRoman: (0.683, -0.217)
        case .helvetica, .helveticaBold: (0.718, -0.207)
        case nil: nil
        }
    }
}
