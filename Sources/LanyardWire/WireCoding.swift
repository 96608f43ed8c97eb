import Foundation

/// JSON as the server writes it: snake_case keys (spelled in each type's `CodingKeys`), RFC 3339 times with
/// milliseconds.
///
/// ```swift
/// let user = try WireCoding.decoder().decode(User.self, from: data)
/// ```
public enum WireCoding {
    /// A decoder for the server's answers.
    ///
    /// ```swift
    /// let session = try WireCoding.decoder().decode(SessionResponse.self, from: data)
    /// ```
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
            if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 time: \(text)")
        }
        return decoder
    }

    /// An encoder that writes what the server reads: members in a stable (sorted) order, times with milliseconds.
    ///
    /// ```swift
    /// let body = try WireCoding.encoder().encode(RefreshBody(refreshToken: token))
    /// ```
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
