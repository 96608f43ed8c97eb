import Crypto
import Foundation

/// The 32-byte key that encrypts private keys and provider secrets at rest (AES-256-GCM).
public struct MasterKey: Sendable {
    private let rawBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: rawBytes) }

    public init(rawBytes: [UInt8]) throws {
        guard rawBytes.count == 32 else { throw MasterKeyError.wrongLength(rawBytes.count) }
        self.rawBytes = rawBytes
    }

    public init(base64: String) throws {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw MasterKeyError.notBase64
        }
        try self.init(rawBytes: Array(data))
    }

    public func seal(_ plaintext: some DataProtocol) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key)
        guard let combined = box.combined else { throw MasterKeyError.cannotSeal }
        return Array(combined)
    }

    public func open(_ sealed: some DataProtocol) throws -> [UInt8] {
        let box = try AES.GCM.SealedBox(combined: sealed)
        return Array(try AES.GCM.open(box, using: key))
    }

    /// A key for one purpose derived from the master key, so one secret never serves two jobs.
    public func derivedKey(purpose: String) -> [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(purpose.utf8), outputByteCount: 32)
            .withUnsafeBytes { Array($0) }
    }
}

public enum MasterKeyError: Error, CustomStringConvertible {
    case notBase64
    case wrongLength(Int)
    case cannotSeal

    public var description: String {
        switch self {
        case .notBase64: "is not valid base64"
        case .wrongLength(let count): "must decode to 32 bytes, got \(count)"
        case .cannotSeal: "could not encrypt"
        }
    }
}
