import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport

/// Reads JSON request bodies with a size limit, turning every problem into `INVALID_REQUEST` (with
/// `details.field`) or `PAYLOAD_TOO_LARGE` rather than a 500.
enum JSONBody {
    static let authLimit = 64 * 1024

    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int = authLimit) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw LanyardError.payloadTooLarge(limit: limit)
        }
        var bytes = Data(buffer.readableBytesView)
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { bytes = Data("{}".utf8) }
        guard (try? JSONSerialization.jsonObject(with: bytes)) is [String: Any] else {
            throw LanyardError.malformedJSON("The request body must be a JSON object")
        }
        do {
            return try JSONDecoder().decode(T.self, from: bytes)
        } catch let error as DecodingError {
            throw describe(error)
        }
    }

    static func describe(_ error: DecodingError) -> LanyardError {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return .invalidRequest(field: field, "\(field) is required")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            return .invalidRequest(field: field, "\(field) must be \(describe(type))")
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            return field.isEmpty ? .malformedJSON() : .invalidRequest(field: field, "\(field) is not valid")
        @unknown default:
            return .malformedJSON()
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Double.Type: "a number"
        default: "of another type"
        }
    }
}

/// Checks shared by request types.
enum Field {
    /// A required string that must not be empty.
    static func nonEmpty(_ value: String, _ name: String, maximumLength: Int = 16 * 1024) throws -> String {
        guard !value.isEmpty else { throw LanyardError.invalidRequest(field: name, "\(name) must not be empty") }
        guard value.utf8.count <= maximumLength else {
            throw LanyardError.invalidRequest(field: name, "\(name) is too long")
        }
        return value
    }

    static func optional(_ value: String?, _ name: String, maximumLength: Int = 1024) throws -> String? {
        guard let value else { return nil }
        guard value.utf8.count <= maximumLength else {
            throw LanyardError.invalidRequest(field: name, "\(name) is too long")
        }
        return value.isEmpty ? nil : value
    }
}
