import Foundation
import Hummingbird

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
        let data = try encoder.encode(value)
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

/// ISO 8601 with milliseconds, in UTC (`2026-11-21T17:29:44.961Z`), written by hand: it runs for every
/// timestamp of every response, and the general formatters cost microseconds each.
enum Timestamps {
    static func format(_ date: Date) -> String {
        // Nearest, not down: stored times are whole milliseconds, and x.961 s can come back as x.96099… s.
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var output = [UInt8]()
        output.reserveCapacity(24)
        func append(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var remaining = value
            while divisor > 0 {
                output.append(UInt8(ascii: "0") + UInt8(remaining / divisor % 10))
                remaining %= divisor
                divisor /= 10
            }
        }
        append(Int(parts.tm_year) + 1900, digits: 4)
        output.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mon) + 1, digits: 2)
        output.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mday), digits: 2)
        output.append(UInt8(ascii: "T"))
        append(Int(parts.tm_hour), digits: 2)
        output.append(UInt8(ascii: ":"))
        append(Int(parts.tm_min), digits: 2)
        output.append(UInt8(ascii: ":"))
        append(Int(parts.tm_sec), digits: 2)
        output.append(UInt8(ascii: "."))
        append(Int(milliseconds - milliseconds.floorDivided(by: 1000) * 1000), digits: 3)
        output.append(UInt8(ascii: "Z"))
        return String(decoding: output, as: UTF8.self)
    }
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor < 0) ? quotient - 1 : quotient
    }
}
