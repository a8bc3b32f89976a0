import Foundation
import HTTPTypes
import HubTestKit
import HummingbirdTesting
import NIOCore
import Testing

@testable import HubAgent

extension HubAPITests {
    /// Issue 19: a phone's token or a browser's subscription registers with its choice; the list and the answers
    /// never carry the secret; PATCH changes only the fields given and names a bad one.
    @Test func devicesChooseTheirSensorsAndEvents() async throws {
        let token = String(repeating: "ab", count: 32)
        try await withClient { client in
            func call(
                _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil
            ) async throws -> (status: HTTPResponse.Status, object: [String: Any], text: String) {
                try await client.execute(uri: uri, method: method, body: body.map { ByteBuffer(string: $0) }) {
                    ($0.status, (try? decode($0.body)) as? [String: Any] ?? [:], String(buffer: $0.body))
                }
            }
            let phone = try await call(
                .post, "/api/v1/devices", #"{"token":"\#(token)","sensors":["door*"],"events":["changed"]}"#)
            #expect(phone.status == .created && phone.object["added"] as? Bool == true)
            let choice = phone.object["choice"] as? [String: Any]
            #expect(choice?["sensors"] as? [String] == ["door*"] && choice?["events"] as? [String] == ["changed"])
            let id = try #require(phone.object["id"] as? String)
            // The original app's shape, no choice: the same device, its choice kept.
            let again = try await call(.post, "/api/v1/devices", #"{"ID":"\#(token.uppercased())"}"#)
            #expect(again.status == .ok && again.object["id"] as? String == id)
            #expect((again.object["choice"] as? [String: Any])?["sensors"] as? [String] == ["door*"])

            var subscription = PushFixtures.subscription()
            subscription["events"] = ["offline", "recovered"]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: subscription), as: UTF8.self)
            let browser = try await call(.post, "/api/v1/devices", body)
            #expect(browser.status == .created)
            let browserID = try #require(browser.object["id"] as? String)
            #expect(try await call(.post, "/api/v1/devices", body).status == .ok)

            let list = try await call(.get, "/api/v1/devices")
            #expect(list.status == .ok)
            #expect(
                !list.text.contains(token) && !list.text.contains("wpush") && !list.text.contains(PushFixtures.auth))
            let devices = try #require(try JSONSerialization.jsonObject(with: Data(list.text.utf8)) as? [[String: Any]])
            let phoneItem = try #require(devices.first { $0["id"] as? String == id })
            #expect(phoneItem["kind"] as? String == "apns" && phoneItem["masked"] as? String == "abababab…abab")
            let browserItem = try #require(devices.first { $0["id"] as? String == browserID })
            #expect(browserItem["kind"] as? String == "webpush")
            #expect(browserItem["masked"] as? String == "updates.push.services.mozilla.com")
            #expect((browserItem["choice"] as? [String: Any])?["events"] as? [String] == ["offline", "recovered"])
            #expect(devices.allSatisfy { $0["added"] is String && $0["choice"] is [String: Any] })

            let edited = try await call(.patch, "/api/v1/devices/\(id)", #"{"events":["offline","silent"]}"#)
            #expect(edited.status == .ok && edited.object["id"] as? String == id)
            let editedChoice = edited.object["choice"] as? [String: Any]
            #expect(editedChoice?["sensors"] as? [String] == ["door*"])
            #expect(editedChoice?["events"] as? [String] == ["offline", "silent"])
            #expect(!edited.text.contains(token))
            let cleared = try await call(.patch, "/api/v1/devices/\(token)", #"{"sensors":[]}"#)
            #expect((cleared.object["choice"] as? [String: Any])?["sensors"] as? [String] == [])

            let refused: [(HTTPRequest.Method, String, String, HTTPResponse.Status, String)] = [
                (.patch, "/api/v1/devices/0123456789abcdef", #"{"events":[]}"#, .notFound, "no such device"),
                (
                    .patch, "/api/v1/devices/\(id)", #"{"events":["opened"]}"#, .badRequest,
                    "\"events\": 'opened' is not an event kind"
                ),
                (
                    .patch, "/api/v1/devices/\(id)", #"{"sensors":["door*",""]}"#, .badRequest,
                    "\"sensors\": an empty sensor name or glob"
                ),
                (.patch, "/api/v1/devices/\(id)", #"{"sensors":"door*"}"#, .badRequest, "\"sensors\" must be an array"),
                (.patch, "/api/v1/devices/\(id)", "{}", .badRequest, "say what to change"),
                (.patch, "/api/v1/devices/\(id)", #"{"colour":1}"#, .badRequest, "unknown field \"colour\""),
                (
                    .post, "/api/v1/devices", #"{"token":"\#(token)","endpoint":"https://x.example/1"}"#, .badRequest,
                    "a token and a subscription at once"
                ),
                (
                    .post, "/api/v1/devices",
                    #"{"endpoint":"https://x.example/1","keys":{"p256dh":"AAAA","auth":"x"}}"#,
                    .badRequest, "keys.p256dh must be a P-256 public key"
                ),
                (.post, "/api/v1/devices", #"{"sensors":["a"]}"#, .badRequest, "say \"token\""),
            ]
            for (method, uri, body, status, message) in refused {
                let answer = try await call(method, uri, body)
                #expect(answer.status == status, "\(method) \(uri) \(body): \(answer.text)")
                #expect((answer.object["error"] as? String)?.hasPrefix(message) == true, "\(body): \(answer.text)")
            }
            // Nothing refused changed anything.
            let unchanged = try await call(.get, "/api/v1/devices")
            #expect(unchanged.text.contains(#""events":["offline","silent"]"#))

            #expect(try await call(.delete, "/api/v1/devices/\(id)").status == .noContent)
            #expect(
                try await call(
                    .delete,
                    "/api/v1/devices/\(PushFixtures.endpoint.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
                ).status == .noContent)
            #expect(try await call(.get, "/api/v1/devices").text == "[]")
        }
    }

    /// With an API token, every devices route needs it: the list too, since it tells which devices exist.
    @Test func devicesNeedTheAPIToken() async throws {
        try await withClient(token: "s3cret") { client in
            let routes: [(HTTPRequest.Method, String)] = [
                (.get, "/api/v1/devices"), (.post, "/api/v1/devices"), (.patch, "/api/v1/devices/00"),
                (.delete, "/api/v1/devices/00"),
            ]
            for (method, uri) in routes {
                try await client.execute(uri: uri, method: method, body: ByteBuffer(string: "{}")) {
                    #expect($0.status == .unauthorized, "\(method) \(uri)")
                }
            }
            try await client.execute(
                uri: "/api/v1/devices", method: .get, headers: [.authorization: "Bearer s3cret"]
            ) { #expect($0.status == .ok && String(buffer: $0.body) == "[]") }
        }
    }
}
