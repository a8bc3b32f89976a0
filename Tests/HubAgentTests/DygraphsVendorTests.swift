import Foundation
import Testing

@testable import HubAgent

/// The charts' library as hubd serves it is the file vendored from Debian's libjs-dygraphs, byte for byte
/// (`scripts/vendor-dygraphs` writes both): one copy, never edited by hand.
@Suite struct DygraphsVendorTests {
    @Test func theServedLibraryIsTheVendoredFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("vendor/dygraphs")
        let script = try String(contentsOf: folder.appendingPathComponent("dygraph.min.js"), encoding: .utf8)
        let style = try String(contentsOf: folder.appendingPathComponent("dygraph.min.css"), encoding: .utf8)
        #expect(Dygraphs.script == script)
        #expect(Dygraphs.style == style)
        #expect(try String(contentsOf: folder.appendingPathComponent("LICENSE"), encoding: .utf8).contains("MIT"))
    }
}
