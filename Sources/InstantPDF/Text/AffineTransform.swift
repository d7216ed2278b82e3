/// A PDF transformation matrix `[a b c d e f]` (ISO 32000-1, 8.3.3): a point `(x, y)` maps to
/// `(a·x + c·y + e, b·x + d·y + f)`.
struct AffineTransform: Equatable {
    var a = 1.0
    var b = 0.0
    var c = 0.0
    var d = 1.0
    var e = 0.0
    var f = 0.0

    static let identity = AffineTransform()

    /// The matrix of six numeric operands; `nil` unless all six are finite numbers.
    init?(_ values: [Double]) {
        guard values.count == 6, values.allSatisfy(\.isFinite) else { return nil }
        (a, b, c, d, e, f) = (values[0], values[1], values[2], values[3], values[4], values[5])
    }

    init(a: Double, b: Double, c: Double, d: Double, e: Double, f: Double) {
        (self.a, self.b, self.c, self.d, self.e, self.f) = (a, b, c, d, e, f)
    }

    init() {}

    /// A translation by `(x, y)`.
    static func translation(_ x: Double, _ y: Double) -> AffineTransform {
        AffineTransform(a: 1, b: 0, c: 0, d: 1, e: x, f: y)
    }

    /// This transformation followed by `next` (the product `self × next`).
    func then(_ next: AffineTransform) -> AffineTransform {
        AffineTransform(
            a: a * next.a + b * next.c, b: a * next.b + b * next.d,
            c: c * next.a + d * next.c, d: c * next.b + d * next.d,
            e: e * next.a + f * next.c + next.e, f: e * next.b + f * next.d + next.f)
    }

    func apply(_ x: Double, _ y: Double) -> (x: Double, y: Double) {
        (a * x + c * y + e, b * x + d * y + f)
    }
}
