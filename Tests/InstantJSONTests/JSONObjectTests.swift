import Foundation
import PropertyBased
import Testing

@testable import InstantJSON

@Suite("JSON objects read and change like dictionaries")
struct JSONObjectTests {
    /// The keys of random objects: picked at random, many are given twice, and two are one key
    /// ("é" as one scalar and with a combining accent).
    static let keys = ["a", "b", "id", "v", "type", "Zed", "é", "e\u{301}", "ü", "bbox", "zz"]

    @Test func everyWayOfMakingOneAgreesWithADictionary() async {
        await propertyCheck(input: Gen<Int?>.element(of: Array(0..<Self.keys.count)).array(of: 0...20)) { picks in
            let pairs = picks.enumerated().map { (Self.keys[$1!], JSONValue.integer(Int64($0))) }
            let dictionary = Dictionary(pairs, uniquingKeysWith: { _, last in last })
            let made = JSONObject(pairs, uniquingKeysWith: { _, last in last })
            var grown = JSONObject()
            for (key, value) in pairs { grown[key] = value }
            for object in [made, grown, JSONObject(dictionary)] {
                #expect(object.dictionary == dictionary)
                #expect(object.count == dictionary.count)
                // In key order, each key once.
                #expect(zip(object.keys, object.keys.dropFirst()).allSatisfy { $0 < $1 })
                for (key, value) in dictionary { #expect(object[key] == value) }
            }
            #expect(made == grown)
            #expect(made.hashValue == grown.hashValue)
        }
    }

    @Test func keysAreToldApartAsStringsAre() {
        #expect(JSONObject().description == "[:]")
        // "é" written as one scalar and as "e" with a combining accent are one key, as in a dictionary.
        let object: JSONObject = ["é": 1, "e\u{301}": 2, "b": 3]
        #expect(object.count == 2)
        #expect(object["é"] == 2)
        #expect(object["e\u{301}"] == 2)
        #expect(Array(object.keys) == ["b", "é"])
        #expect(object["c"] == nil)
        // A missing key is no value at all, not JSON's null.
        #expect(JSONObject()["a"] == nil)
    }

    @Test func membersAreChangedInPlace() {
        var object: JSONObject = ["m": 1, "c": 2]
        #expect(object.updateValue(3, forKey: "m") == 1)
        #expect(object.updateValue(4, forKey: "a") == nil)
        object["z"] = 5
        object["c"] = nil
        #expect(object.removeValue(forKey: "absent") == nil)
        #expect(object.removeValue(forKey: "a") == 4)
        object["n", default: 0] = 6
        #expect(object == ["m": 3, "n": 6, "z": 5])
        #expect(JSONValue.object(object).serializedString() == #"{"m":3,"n":6,"z":5}"#)
    }

    @Test func mergingFilteringAndMappingKeepTheKeysInOrder() {
        let left: JSONObject = ["a": 1, "c": 3, "e": 5]
        let right: JSONObject = ["b": 20, "c": 30, "f": 60]
        #expect(left.merging(right) { _, new in new } == ["a": 1, "b": 20, "c": 30, "e": 5, "f": 60])
        #expect(left.merging(right) { old, _ in old } == ["a": 1, "b": 20, "c": 3, "e": 5, "f": 60])
        #expect(left.merging([:]) { $1 } == left)
        #expect(JSONObject().merging(right) { $1 } == right)
        #expect(left.filter { $0.key != "c" } == ["a": 1, "e": 5])
        #expect(left.mapValues { .integer(($0.intValue.map(Int64.init) ?? 0) * 2) } == ["a": 2, "c": 6, "e": 10])
        #expect(left.compactMapValues { $0 == 3 ? JSONValue?.none : $0 } == ["a": 1, "e": 5])
        #expect(Array(left.values) == [1, 3, 5])
    }

    @Test func parsingKeepsTheLastOfAKeyGivenTwiceInAnyOrder() throws {
        let parsed = try JSONValue(parsing: #"{"z": 1, "a": {"y": [], "b": 2}, "z": 3, "m": null}"#)
        #expect(parsed == ["a": ["b": 2, "y": []], "m": nil, "z": 3])
        #expect(parsed.serializedString() == #"{"a":{"b":2,"y":[]},"m":null,"z":3}"#)
        #expect(parsed["m"] == .null)
        #expect(parsed["q"] == nil)
    }

    @Test func aLargeObjectInReverseOrderIsSortedOnce() throws {
        let count = 50_000
        let text = "{" + (0..<count).reversed().map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        let object = try #require(try JSONValue(parsing: text).objectValue)
        #expect(object.count == count)
        #expect(object["k49999"] == 49_999)
        #expect(zip(object.keys, object.keys.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func codableGoesThroughAnObjectOfTheSameMembers() throws {
        let object: JSONObject = ["b": [1, 2], "a": ["c": "d"], "n": nil]
        let data = try JSONEncoder().encode(object)
        #expect(try JSONDecoder().decode(JSONObject.self, from: data) == object)
        #expect(try JSONValue(parsing: data) == .object(object))
        // Members' keys are data: a coder that renames keys leaves them as they are.
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let record: JSONObject = ["pageIndex": 0, "text": ["format": "plain"], "snake_case": true]
        let renamed = try encoder.encode(record)
        #expect(try JSONValue(parsing: renamed) == .object(record))
        #expect(try decoder.decode(JSONObject.self, from: renamed) == record)
        #expect(try decoder.decode(JSONValue.self, from: renamed) == .object(record))
    }
}
