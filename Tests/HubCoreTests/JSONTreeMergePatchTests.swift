import Foundation
import HubCore
import Testing

/// JSON Merge Patch (RFC 7396) on `JSONTree`: what the alert book's log lines write for a changed alert.
@Suite struct JSONTreeMergePatchTests {
    static func tree(_ text: String) throws -> JSONTree { try JSONTree.parse(Array(text.utf8)) }

    /// RFC 7396, appendix A: each original, patch and result.
    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
    ])
    func theRFCsExamples(original: String, patch: String, result: String) throws {
        #expect(try Self.tree(original).merging(Self.tree(patch)) == Self.tree(result))
    }

    /// The patch from one tree to another gives the other back, holds only what changed, and says `null` for a
    /// member that went; a tree holding `null` has no patch (it would read as "remove").
    @Test func aPatchHoldsWhatChangedAndGivesTheNewTreeBack() throws {
        let old = try Self.tree(
            #"{"id":"a","firing":true,"event":{"time":"t1","new":"open","old":"closed"},"told":["x"],"held":"p"}"#)
        let new = try Self.tree(
            #"{"id":"a","firing":false,"event":{"time":"t2","new":"closed","old":"closed"},"told":["x","y"]}"#)
        let patch = try #require(JSONTree.mergePatch(from: old, to: new))
        #expect(
            patch
                == (try Self.tree(
                    #"{"firing":false,"event":{"time":"t2","new":"closed"},"told":["x","y"],"held":null}"#)))
        #expect(old.merging(patch) == new)
        #expect(JSONTree.mergePatch(from: old, to: old) == .object([]))
        #expect(JSONTree.mergePatch(from: old, to: try Self.tree(#"{"id":"a","held":null}"#)) == nil)
        #expect(JSONTree.mergePatch(from: old, to: try Self.tree(#"{"id":"a","told":[null]}"#)) == nil)
    }

    /// A tree goes into a `Codable` value and comes out the same (numbers by their value, members by name).
    @Test func aTreeInACodableValueReadsBack() throws {
        let tree = try Self.tree(#"{"a":[1,2.5,-3e2,true,false,null,"é\n"],"b":{"c":{}},"d":12345678901}"#)
        let data = try JSONEncoder().encode(["patch": tree])
        let read = try #require(try JSONDecoder().decode([String: JSONTree].self, from: data)["patch"])
        #expect(read == tree)
        struct Shape: Codable, Equatable {
            var a: [Double?]
            var d: Int
        }
        let shape = Shape(a: [1, nil, 2.25], d: 7)
        #expect(try JSONTree(encoding: shape).decoded(as: Shape.self) == shape)
    }
}
