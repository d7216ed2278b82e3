/// The members of a JSON object: each key once, kept in key order.
///
/// It reads and changes like a `[String: JSONValue]` (a subscript by key, `keys`, `values`,
/// `removeValue(forKey:)`, `merging`, `mapValues`, `filter`, a dictionary literal), and keys are
/// told apart as `String`s are (canonically equivalent keys are one key, as in a dictionary).
/// Unlike a dictionary it keeps its members in an array sorted by key:
/// - building one hashes nothing: the members that a parser or a writer hands over already in
///   key order are taken as they are, and others are sorted once;
/// - it is written in key order without sorting (``JSONValue/serialized()``);
/// - a member is found by a binary search of the keys, and two objects' members can be walked
///   side by side in order.
///
/// The objects of Instant JSON are small (a record has a dozen members, most objects within it
/// a handful), where hashing every key as an object was parsed and again as it was looked up took
/// more of the server's time than anything else in a push but SQLite (docs/BENCHMARKS.md,
/// issue 15). Adding a member to a large object one at a time moves the members after it; build
/// large objects from a dictionary or a sequence of members instead (``init(_:)``).
public struct JSONObject: Sendable {
    public typealias Element = (key: String, value: JSONValue)

    /// The members in key order (`String`'s `<`), each key once.
    private var members: [Element]

    /// An object without members.
    public init() {
        members = []
    }

    /// The members of `dictionary`.
    public init(_ dictionary: [String: JSONValue]) {
        members = Array(dictionary)
        members.sort { $0.key < $1.key }
    }

    /// Members in any order; of a key given more than once, `combine` makes the value from the
    /// one kept so far and the next.
    public init<S: Sequence>(
        _ members: S, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue
    ) rethrows where S.Element == (String, JSONValue) {
        try self.init(members.map { (key: $0.0, value: $0.1) }, uniquingKeysWith: combine)
    }

    /// Members in any order, sorted here (a stable sort, which takes members already in order
    /// with one comparison each); of equal keys, `combine` makes one value in the order given.
    init(_ members: [Element], uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows {
        self.members = members
        guard members.count > 1 else { return }
        var isSorted = true
        for index in 1..<members.count where !(members[index - 1].key < members[index].key) {
            isSorted = false
            break
        }
        guard !isSorted else { return }
        self.members.sort { $0.key < $1.key }
        // Equal keys are next to each other now, in the order they were given.
        var kept = 0
        for index in 1..<self.members.count {
            if self.members[index].key == self.members[kept].key {
                self.members[kept].value = try combine(self.members[kept].value, self.members[index].value)
            } else {
                kept += 1
                self.members.swapAt(kept, index)
            }
        }
        self.members.removeLast(self.members.count - kept - 1)
    }

    /// The position of `key` among the members, or where it would go.
    private func position(of key: String) -> (index: Int, isFound: Bool) {
        var low = 0
        var high = members.count
        while low < high {
            let middle = (low + high) / 2
            if members[middle].key < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return (low, low < members.count && members[low].key == key)
    }

    /// The value of the member with `key`; setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            // Not a conditional expression: its `nil` would be JSON's null, a value.
            let (index, isFound) = position(of: key)
            guard isFound else { return nil }
            return members[index].value
        }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The value of the member with `key`, or `defaultValue` when there is none; changing it
    /// adds the member.
    public subscript(key: String, default defaultValue: @autoclosure () -> JSONValue) -> JSONValue {
        get { self[key] ?? defaultValue() }
        set { self[key] = newValue }
    }

    /// Sets the member with `key` to `value`.
    /// - Returns: the value it had, if it was there.
    @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        let (index, isFound) = position(of: key)
        guard isFound else {
            members.insert((key, value), at: index)
            return nil
        }
        defer { members[index].value = value }
        return members[index].value
    }

    /// Removes the member with `key`.
    /// - Returns: its value, if it was there.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let (index, isFound) = position(of: key)
        guard isFound else { return nil }
        return members.remove(at: index).value
    }

    /// The keys, in order.
    public var keys: LazyMapCollection<[Element], String> {
        members.lazy.map(\.key)
    }

    /// The values, in the order of their keys.
    public var values: LazyMapCollection<[Element], JSONValue> {
        members.lazy.map(\.value)
    }

    /// Puts in the members of `other`; of a key in both, `combine` makes the value from this
    /// object's and `other`'s.
    public mutating func merge(
        _ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue
    ) rethrows {
        guard !other.isEmpty else { return }
        guard !isEmpty else { return self = other }
        // Both in key order: merged in one pass.
        var merged: [Element] = []
        merged.reserveCapacity(members.count + other.members.count)
        var mine = 0
        var theirs = 0
        while mine < members.count, theirs < other.members.count {
            let (left, right) = (members[mine], other.members[theirs])
            if left.key < right.key {
                merged.append(left)
                mine += 1
            } else if right.key < left.key {
                merged.append(right)
                theirs += 1
            } else {
                merged.append((left.key, try combine(left.value, right.value)))
                mine += 1
                theirs += 1
            }
        }
        merged += members[mine...]
        merged += other.members[theirs...]
        members = merged
    }

    /// This object with the members of `other` put in; of a key in both, `combine` makes the
    /// value from this object's and `other`'s.
    public func merging(
        _ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue
    ) rethrows -> JSONObject {
        var merged = self
        try merged.merge(other, uniquingKeysWith: combine)
        return merged
    }

    /// The same keys with the values that `transform` makes.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        JSONObject(sortedMembers: try members.map { ($0.key, try transform($0.value)) })
    }

    /// The same keys, less those whose value `transform` makes `nil`.
    public func compactMapValues(_ transform: (JSONValue) throws -> JSONValue?) rethrows -> JSONObject {
        JSONObject(
            sortedMembers: try members.compactMap { member in try transform(member.value).map { (member.key, $0) } })
    }

    /// The members for which `isIncluded` is true.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        JSONObject(sortedMembers: try members.filter(isIncluded))
    }

    /// Members already in key order, each key once (checked in debug builds).
    init(sortedMembers: [Element]) {
        assert(zip(sortedMembers, sortedMembers.dropFirst()).allSatisfy { $0.key < $1.key })
        members = sortedMembers
    }

    /// A dictionary of the members, for code that wants one.
    public var dictionary: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: members.lazy.map { ($0.key, $0.value) })
    }
}

extension JSONObject: RandomAccessCollection {
    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Element { members[position] }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Of a key given twice, the last value counts.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) }) { _, last in last }
    }
}

extension JSONObject: Hashable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}

/// Coded as a dictionary of strings in a single value: coders that rename keys (a `JSONEncoder`'s
/// `keyEncodingStrategy`) leave such a dictionary's keys as they are, and so the members' keys.
extension JSONObject: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([String: JSONValue].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(dictionary)
    }
}

extension JSONObject: CustomStringConvertible {
    /// As a dictionary's: `["a": integer(1)]`, `[:]` when empty.
    public var description: String {
        guard !members.isEmpty else { return "[:]" }
        return "[" + members.map { "\($0.key.debugDescription): \($0.value)" }.joined(separator: ", ") + "]"
    }
}
