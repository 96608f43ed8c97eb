import Foundation

/// A JWS in compact serialization, split but not yet trusted.
public struct CompactJWS: Sendable {
    public let header: [String: JSONValue]
    public let claims: [String: JSONValue]
    public let payload: [UInt8]
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    public var algorithm: String? { header["alg"]?.stringValue }
    public var keyID: String? { header["kid"]?.stringValue }

    /// Parses `header.payload.signature`; `nil` for anything that is not a well-formed JWS with JSON objects.
    public init?(_ token: String) {
        // Generous bound: real provider tokens are ~1 KB; this only stops abuse.
        guard token.utf8.count <= 16 * 1024 else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decode(parts[0]),
              let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]),
              let header = JSONValue.parseObject(headerBytes),
              let claims = JSONValue.parseObject(payloadBytes)
        else { return nil }
        self.header = header
        self.claims = claims
        self.payload = payloadBytes
        self.signingInput = Array("\(parts[0]).\(parts[1])".utf8)
        self.signature = signature
    }

    /// Builds the signing input for new tokens from a header and claims.
    public static func signingInput(header: some Encodable, claims: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let headerPart = Base64URL.encode(try encoder.encode(header))
        let claimsPart = Base64URL.encode(try encoder.encode(claims))
        return "\(headerPart).\(claimsPart)"
    }
}
