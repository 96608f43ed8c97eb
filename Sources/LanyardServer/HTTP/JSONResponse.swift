import Foundation
import Hummingbird
import LanyardSupport

/// JSON responses in the API's style: snake_case keys (spelled out in each type's `CodingKeys`: a key
/// strategy would convert every key of every response), ISO 8601 times.
enum JSONResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamps.format(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        respond(Array(try encoder.encode(value)), status: status, headers: headers)
    }

    /// The hot responses (sessions, the account) write themselves.
    static func make(_ value: some JSONWritable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        respond(JSONWriter.write(value), status: status, headers: headers)
    }

    /// A wire type with a hand-written writer (`SessionResponse`, `LinkResponse`): the writer.
    static func make(_ value: some JSONWritable & Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        respond(JSONWriter.write(value), status: status, headers: headers)
    }

    private static func respond(_ data: [UInt8], status: HTTPResponse.Status, headers: HTTPFields) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = headers[.cacheControl] ?? "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func raw(_ data: some Sequence<UInt8>, contentType: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func noContent() -> Response {
        Response(status: .noContent)
    }
}

