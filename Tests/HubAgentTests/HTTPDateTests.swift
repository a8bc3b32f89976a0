import Foundation
import Testing

@testable import HubAgent

@Suite struct HTTPDateTests {
    @Test func imfFixdateAsRFC9110WritesIt() {
        // RFC 9110, section 5.6.7's own example.
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func nowIsTheCurrentSecond() {
        let before = Int(Date().timeIntervalSince1970)
        let now = HTTPDate.now()
        let after = Int(Date().timeIntervalSince1970)
        #expect((before...after).map(HTTPDate.format).contains(now), "\(now)")
    }
}
