/// An authenticator's data (WebAuthn §6.1): the RP ID's hash, flags, the signature counter, and on registration
/// the new credential (AAGUID, id, COSE key). Extensions are read past and ignored; nothing may follow them.
public struct AuthenticatorData: Sendable {
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// The credential a registration's data carries.
    public struct AttestedCredential: Sendable {
        public var aaguid: [UInt8]
        public var credentialID: [UInt8]
        /// The COSE key exactly as the authenticator wrote it (stored, and parsed again at each sign-in).
        public var publicKey: [UInt8]
    }

    public var rpIDHash: [UInt8]
    public var flags: Flags
    public var signCount: UInt32
    public var attestedCredential: AttestedCredential?

    /// Credential ids are at most 1023 bytes (WebAuthn §5.8.3).
    public static let maximumCredentialIDLength = 1023

    public init(_ bytes: [UInt8]) throws(CBORError) {
        guard bytes.count >= 37 else { throw CBORError("authenticator data of \(bytes.count) bytes, under 37") }
        guard bytes.count <= CBORDecoder.maximumInput else { throw CBORError("authenticator data too long") }
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw CBORError("attested credential data truncated") }
            let aaguid = Array(bytes[offset..<(offset + 16)])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard (1...Self.maximumCredentialIDLength).contains(length), bytes.count >= offset + length else {
                throw CBORError("a credential id of \(length) bytes")
            }
            let credentialID = Array(bytes[offset..<(offset + length)])
            offset += length
            let (_, keyEnd) = try CBORDecoder.decodePrefix(bytes, from: offset)
            attestedCredential = AttestedCredential(aaguid: aaguid, credentialID: credentialID,
                                                    publicKey: Array(bytes[offset..<keyEnd]))
            offset = keyEnd
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let (extensions, end) = try CBORDecoder.decodePrefix(bytes, from: offset)
            guard case .map = extensions else { throw CBORError("extensions that are not a map") }
            offset = end
        }
        guard offset == bytes.count else { throw CBORError("\(bytes.count - offset) bytes after the authenticator data") }
    }
}
