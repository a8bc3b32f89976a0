import Foundation
import HTTPTypes
import HubCore
import Hummingbird
import Logging
import NIOCore

/// A JSON response from a Codable answer, keys sorted (Foundation's JSONEncoder on Linux keeps no declaration order).
/// Sorting costs little at these sizes (measured: 4.6 ms for the largest, 1,000 events, release build, both cores
/// busy); the sensor list, polled every 2 s for up to 100,000 sensors, is written by `JSONWriter` instead.
func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    do {
        return json(bytes: Array(try encoder.encode(value)), status: status)
    } catch {
        let failure = #"{"error":"internal error: the answer could not be written"}"#
        return json(bytes: Array(failure.utf8), status: .internalServerError)
    }
}

/// The sensors' list and a sensor, written by the hub's `JSONWriter` (the dashboard polls the list every 2 s, for
/// 10,000 sensors perhaps).
func json(_ writer: JSONWriter, status: HTTPResponse.Status = .ok) -> Response {
    json(bytes: writer.bytes, status: status)
}

private func json(bytes: [UInt8], status: HTTPResponse.Status) -> Response {
    Response(
        status: status, headers: [.contentType: "application/json; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
}

/// A value that is written as JSON `null` when absent (an optional property is left out instead), and when it is a
/// number JSON can't say (NaN, ±∞).
struct Nullable<Value: Encodable>: Encodable, ExpressibleByNilLiteral {
    var value: Value?

    init(_ value: Value?) { self.value = value }
    init(nilLiteral: ()) { value = nil }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value, (value as? Double)?.isFinite != false {
            try container.encode(value)
        } else {
            try container.encodeNil()
        }
    }
}

/// `{"error":"…"}`.
struct ErrorAnswer: Encodable {
    var error: String
}

/// Errors as `{"error":"…"}` with their status; anything unexpected is a 500, logged.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            // The router's own 404 (no route matched) says nothing more: say what was asked for.
            let fallback =
                error.status == .notFound
                ? "no such endpoint: \(request.method) \(request.uri.path)" : error.status.reasonPhrase
            var response = json(ErrorAnswer(error: error.body ?? fallback), status: error.status)
            // What the error says besides (WWW-Authenticate on a 401, Retry-After).
            for field in error.headers where field.name != .contentType && field.name != .contentLength {
                response.headers.append(field)
            }
            return response
        } catch let error as any HTTPResponseError {
            let status = error.status
            let message =
                status == .notFound ? "no such endpoint: \(request.method) \(request.uri.path)" : status.reasonPhrase
            return json(ErrorAnswer(error: message), status: status)
        } catch {
            logger.error("HTTP request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return json(ErrorAnswer(error: "internal error: \(error)"), status: .internalServerError)
        }
    }
}
