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

    /// Parses `header.payload.signature`; `nil` for anything that is not a well-formed JWS with JSON objects, and
    /// for a header with `crit`: Lanyard understands no JWS extension, and RFC 7515 section 4.1.11 says a token
    /// whose critical extensions are not all understood is invalid.
    public init?(_ token: String) {
        // Generous bound: real provider tokens are ~1 KB; this only stops abuse.
        guard token.utf8.count <= 16 * 1024 else { return nil }
        let bytes = Array(token.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { return nil }
        let decoded: ([UInt8], [UInt8], [UInt8])? = bytes.withUnsafeBufferPointer { buffer in
            guard let header = Base64URL.decode(utf8: UnsafeBufferPointer(rebasing: buffer[0..<dots[0]])),
                  let payload = Base64URL.decode(utf8: UnsafeBufferPointer(rebasing: buffer[(dots[0] + 1)..<dots[1]])),
                  let signature = Base64URL.decode(utf8: UnsafeBufferPointer(rebasing: buffer[(dots[1] + 1)...]))
            else { return nil }
            return (header, payload, signature)
        }
        guard let (headerBytes, payloadBytes, signature) = decoded,
              let header = JSONParser.parseObject(headerBytes),
              let claims = JSONParser.parseObject(payloadBytes),
              header["crit"] == nil
        else { return nil }
        self.header = header
        self.claims = claims
        self.payload = payloadBytes
        self.signingInput = Array(bytes[0..<dots[1]])
        self.signature = signature
    }

    /// Builds the signing input from a header and claims that write their own JSON (the hot path).
    public static func signingInput(header: some JSONWritable, claims: some JSONWritable) -> String {
        Base64URL.encode(JSONWriter.write(header)) + "." + Base64URL.encode(JSONWriter.write(claims))
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
