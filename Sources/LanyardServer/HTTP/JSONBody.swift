import Foundation
import Hummingbird
import LanyardCore
import LanyardSupport

/// Reads JSON request bodies with a size limit, turning every problem into `INVALID_REQUEST` (with
/// `details.field`) or `PAYLOAD_TOO_LARGE` rather than a 500. The body is parsed once, strictly
/// (`JSONParser`), and each request type reads its members from the object (`RequestBody`).
enum JSONBody {
    static let authLimit = 64 * 1024

    /// `statedLimit` is the limit an answer names when the body is over `limit` (a record's 256 KiB, where the
    /// body may carry its envelope besides).
    static func decode<T: RequestBody>(_ type: T.Type, from request: Request, limit: Int = authLimit,
                                       statedLimit: Int? = nil) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw LanyardError.payloadTooLarge(limit: statedLimit ?? limit)
        }
        return try T(BodyFields(try members(of: buffer.readableBytesView)))
    }

    /// The members of a body that must be a JSON object; an empty body (or only whitespace) is `{}`.
    static func members(of bytes: some Collection<UInt8>) throws -> [String: JSONValue] {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return [:] }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw LanyardError.malformedJSON("The request body is not valid JSON: \(error.reason) at byte \(error.offset)")
        }
        guard case .object(let members) = value else {
            throw LanyardError.malformedJSON("The request body must be a JSON object")
        }
        return members
    }
}

/// A request type read from the members of its JSON body.
protocol RequestBody {
    init(_ fields: BodyFields) throws
}

/// A request body's members, read by name. A member that is missing or of the wrong type is an
/// `INVALID_REQUEST` naming it in `details.field`; `null` counts as absent (except for `value`); members a
/// request does not know are ignored.
struct BodyFields {
    let members: [String: JSONValue]

    init(_ members: [String: JSONValue]) {
        self.members = members
    }

    func contains(_ name: String) -> Bool {
        members[name] != nil
    }

    /// Any JSON value, `null` included, that must be present.
    func value(_ name: String) throws -> JSONValue {
        guard let value = members[name] else { throw LanyardError.invalidRequest(field: name, "\(name) is required") }
        return value
    }

    func string(_ name: String) throws -> String {
        guard let string = try optionalString(name) else {
            throw LanyardError.invalidRequest(field: name, "\(name) is required")
        }
        return string
    }

    /// A string without U+0000, which PostgreSQL's text cannot store (JSON can carry it as `\u0000`).
    func optionalString(_ name: String) throws -> String? {
        switch members[name] {
        case nil, .null?: return nil
        case .string(let string)?:
            guard !string.containsNUL else {
                throw LanyardError.invalidRequest(field: name, "\(name) must not contain the NUL character")
            }
            return string
        default: throw LanyardError.invalidRequest(field: name, "\(name) must be a string")
        }
    }

    /// A string that must name one of `T`'s cases (those of `allowed`, when given).
    func optionalCase<T: RawRepresentable & CaseIterable>(_ name: String, of type: T.Type = T.self,
                                                           allowed: [T]? = nil) throws -> T? where T.RawValue == String {
        guard let text = try optionalString(name) else { return nil }
        let choices = allowed ?? Array(T.allCases)
        guard let value = T(rawValue: text), choices.contains(where: { $0.rawValue == value.rawValue }) else {
            throw LanyardError.invalidRequest(field: name, """
                \(name) must be one of \(choices.map(\.rawValue).joined(separator: ", "))
                """)
        }
        return value
    }

    func optionalBool(_ name: String) throws -> Bool? {
        switch members[name] {
        case nil, .null?: return nil
        case .bool(let bool)?: return bool
        default: throw LanyardError.invalidRequest(field: name, "\(name) must be true or false")
        }
    }

    /// A whole number that fits `T`.
    func optionalInteger<T: FixedWidthInteger>(_ name: String, as type: T.Type = T.self) throws -> T? {
        switch members[name] {
        case nil, .null?: return nil
        case .number(let number)?:
            guard let integer = T(exactly: number) else {
                throw LanyardError.invalidRequest(field: name, "\(name) must be a whole number")
            }
            return integer
        default: throw LanyardError.invalidRequest(field: name, "\(name) must be a number")
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
